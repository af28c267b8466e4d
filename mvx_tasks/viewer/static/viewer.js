// mvx-bench view: the question list. Rows come from data/index.js (window.MVX_INDEX), so the site
// opens from the file system with no server; they are rendered one page at a time.
(function () {
  "use strict";
  var idx = window.MVX_INDEX;
  var table = document.getElementById("qlist");
  if (!idx || !table) { return; }
  var PAGE = idx.page_size || 100;
  var rows = idx.rows;
  var state = { task: "", status: "", source: "", conflicts: "", q: "", sort: "id", page: 0 };
  var el = {
    task: document.getElementById("f-task"), status: document.getElementById("f-status"),
    source: document.getElementById("f-source"), conflicts: document.getElementById("f-conflicts"),
    q: document.getElementById("f-search"), sort: document.getElementById("f-sort"),
    count: document.getElementById("count"), page: document.getElementById("page"),
    prev: document.getElementById("prev"), next: document.getElementById("next"),
    body: table.querySelector("tbody")
  };

  function fill(select, values) {
    values.forEach(function (v) {
      var o = document.createElement("option"); o.value = v; o.textContent = v; select.appendChild(o);
    });
  }
  fill(el.task, idx.tasks); fill(el.source, idx.sources);

  function readHash() {
    var h = window.location.hash.replace(/^#/, "");
    h.split("&").forEach(function (kv) {
      var p = kv.split("="); if (p.length !== 2) { return; }
      var k = decodeURIComponent(p[0]), v = decodeURIComponent(p[1]);
      if (k in state && k !== "page") { state[k] = v; }
    });
    ["task", "status", "source", "conflicts", "q", "sort"].forEach(function (k) { el[k].value = state[k]; });
  }
  function writeHash() {
    var parts = [];
    ["task", "status", "source", "conflicts", "q"].forEach(function (k) {
      if (state[k]) { parts.push(k + "=" + encodeURIComponent(state[k])); }
    });
    if (state.sort !== "id") { parts.push("sort=" + state.sort); }
    history.replaceState(null, "", parts.length ? "#" + parts.join("&") : window.location.pathname);
  }

  function matches(r) {
    if (state.task && r.task !== state.task) { return false; }
    if (state.status) {
      if (state.status === "unparsed") { if (!r.unparsed) { return false; } }
      else if (r.status !== state.status) { return false; }
    }
    if (state.source && r.source !== state.source) { return false; }
    if (state.conflicts === "yes" && !(r.conflicts > 0)) { return false; }
    if (state.conflicts === "no" && r.conflicts > 0) { return false; }
    if (state.q) {
      var q = state.q.toLowerCase();
      if (r.id.toLowerCase().indexOf(q) < 0 && r.text.toLowerCase().indexOf(q) < 0) { return false; }
    }
    return true;
  }
  function sorter(key) {
    if (key === "time") { return function (a, b) { return (b.time || 0) - (a.time || 0) || (a.id < b.id ? -1 : 1); }; }
    if (key === "time-asc") { return function (a, b) { return (a.time || 0) - (b.time || 0) || (a.id < b.id ? -1 : 1); }; }
    if (key === "tools") { return function (a, b) { return b.tools - a.tools || (a.id < b.id ? -1 : 1); }; }
    if (key === "tools-asc") { return function (a, b) { return a.tools - b.tools || (a.id < b.id ? -1 : 1); }; }
    return function (a, b) { return a.order - b.order; };
  }
  function cell(tr, text, cls) {
    var td = document.createElement("td"); td.textContent = text; if (cls) { td.className = cls; }
    tr.appendChild(td); return td;
  }
  function render() {
    var shown = rows.filter(matches).sort(sorter(state.sort));
    var pages = Math.max(1, Math.ceil(shown.length / PAGE));
    if (state.page >= pages) { state.page = pages - 1; }
    var start = state.page * PAGE, slice = shown.slice(start, start + PAGE);
    el.body.textContent = "";
    slice.forEach(function (r) {
      var tr = document.createElement("tr"); tr.setAttribute("data-id", r.id);
      var td = document.createElement("td"), a = document.createElement("a");
      a.href = r.href; a.textContent = r.id; td.appendChild(a); tr.appendChild(td);
      cell(tr, r.task); cell(tr, r.status, r.status);
      cell(tr, r.parsed === null ? "(none)" : r.parsed); cell(tr, r.answer); cell(tr, r.source);
      cell(tr, String(r.tools), "num"); cell(tr, String(r.conflicts), "num");
      cell(tr, r.time === null ? "" : r.time.toFixed(2), "num"); cell(tr, r.text, "text").title = r.text;
      el.body.appendChild(tr);
    });
    el.count.textContent = shown.length + " of " + rows.length + " questions";
    el.page.textContent = "page " + (state.page + 1) + " / " + pages;
    el.prev.disabled = state.page === 0; el.next.disabled = state.page >= pages - 1;
  }
  ["task", "status", "source", "conflicts", "sort"].forEach(function (k) {
    el[k].addEventListener("change", function () { state[k] = el[k].value; state.page = 0; writeHash(); render(); });
  });
  el.q.addEventListener("input", function () { state.q = el.q.value.trim(); state.page = 0; writeHash(); render(); });
  el.prev.addEventListener("click", function () { state.page -= 1; render(); });
  el.next.addEventListener("click", function () { state.page += 1; render(); });
  readHash(); render();
})();
