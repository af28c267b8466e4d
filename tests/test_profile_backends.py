"""Every named profile wires backends whose constructors accept its options (no weights are loaded)."""
import inspect

import pytest

from sama_model.profiles import load_profile, profile_names
from sama_model.tools.backends import resolve_backend


@pytest.mark.parametrize("profile", profile_names())
def test_profile_backend_options_match_constructors(profile):
    spec = load_profile(profile)
    checked = 0
    for tool, backend in spec["backends"].items():
        if not backend:
            continue
        cls = resolve_backend(tool, backend["name"])
        params = inspect.signature(cls).parameters
        takes_any = any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params.values())
        unknown = set(backend.get("options", {})) - set(params)
        assert takes_any or not unknown, f"{profile}: {tool}={backend['name']} does not accept {sorted(unknown)}"
        cls(**backend.get("options", {}))  # constructing is lazy: weights load on first use
        checked += 1
    assert checked >= 6
