"""Arguments and entry of ``mvx-bench view`` (kept light: heavy imports happen when it runs)."""
from __future__ import annotations

import argparse
from pathlib import Path


def add_view_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("output_path", help="an lmms-eval --output_path (or one *_results.json) made with --log_samples")
    parser.add_argument("--compare", default=None, metavar="OTHER_OUTPUT_PATH",
                        help="a second run (e.g. an ablation): adds a page of the questions that flipped")
    parser.add_argument("--out", default="site", help="folder for the site (default: site/)")
    parser.add_argument("--data", default=None,
                        help="canonical data folder (data.jsonl) for question texts of baseline runs")
    parser.add_argument("--no-thumbnails", action="store_true", help="skip extracting the filmstrip frames")
    parser.add_argument("--workers", type=int, default=2, help="threads writing question pages and thumbnails")
    parser.add_argument("--serve", action="store_true", help="serve the site on http://127.0.0.1:PORT after building")
    parser.add_argument("--port", type=int, default=8000)


def cmd_view(args: argparse.Namespace) -> int:
    import sys

    from .render import build_site

    try:
        info = build_site(args.output_path, args.out, compare=args.compare, data=args.data,
                          thumbnails=not args.no_thumbnails, workers=args.workers, progress=sys.stderr.isatty())
    except FileNotFoundError as exc:
        print(f"mvx-bench view: {exc}", file=sys.stderr)
        return 1
    index = Path(info["site"]).resolve() / "index.html"
    print(f"{info['questions']} questions ({'SAMA agent' if info['agent'] else 'baseline'} run), "
          f"{info['thumbnails']} thumbnails, built in {info['seconds']:.1f}s"
          + (f"; {info['flips']} questions flipped" if info["flips"] is not None else ""))
    print(f"open {index.as_uri()}")
    if args.serve:
        serve(Path(info["site"]), args.port)
    return 0


def serve(site: Path, port: int) -> None:
    """A convenience: the site works from the file system too."""
    import functools
    import http.server

    handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=str(site))
    with http.server.ThreadingHTTPServer(("127.0.0.1", port), handler) as httpd:
        print(f"serving {site} on http://127.0.0.1:{port}/ (Ctrl-C stops)", flush=True)
        try:
            httpd.serve_forever()
        except KeyboardInterrupt:
            pass
