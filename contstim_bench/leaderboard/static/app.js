/* contstim-bench leaderboard: sortable tables, panel selector, JSON/CSV export.
   Plain JavaScript, no dependencies; the data comes from data.js (window.CONTSTIM_LEADERBOARD),
   so nothing is fetched and the page works from file:// as from any static host. */
(function () {
  "use strict";

  function cellValue(td) {
    var raw = td.getAttribute("data-value");
    if (raw === null) raw = td.textContent.trim();
    if (raw === "") return { empty: true };
    var num = Number(raw);
    return isFinite(num) ? { num: num } : { str: raw.toLowerCase() };
  }

  function compare(a, b) {
    if (a.empty || b.empty) return (a.empty ? 1 : 0) - (b.empty ? 1 : 0);
    if (a.num !== undefined && b.num !== undefined) return a.num - b.num;
    var sa = a.str !== undefined ? a.str : String(a.num), sb = b.str !== undefined ? b.str : String(b.num);
    return sa < sb ? -1 : sa > sb ? 1 : 0;
  }

  function sortTable(table, col, th) {
    var descending = th.getAttribute("aria-sort") === "ascending";
    var tbody = table.tBodies[0];
    var rows = Array.prototype.slice.call(tbody.rows);
    rows.sort(function (r1, r2) {
      var a = cellValue(r1.cells[col]), b = cellValue(r2.cells[col]);
      if (a.empty || b.empty) return compare(a, b);  // empty cells last in both directions
      var c = compare(a, b);
      return descending ? -c : c;
    });
    rows.forEach(function (r) { tbody.appendChild(r); });
    Array.prototype.forEach.call(headerRow(table).cells, function (h) { h.removeAttribute("aria-sort"); });
    th.setAttribute("aria-sort", descending ? "descending" : "ascending");
  }

  function headerRow(table) {  // the row of column headers (below the column-group row)
    return table.tHead.rows[table.tHead.rows.length - 1];
  }

  function makeSortable(table) {
    Array.prototype.forEach.call(headerRow(table).cells, function (th, col) {
      if (!th.classList.contains("sortable")) return;
      th.tabIndex = 0;
      th.addEventListener("click", function () { sortTable(table, col, th); });
      th.addEventListener("keydown", function (e) { if (e.key === "Enter") sortTable(table, col, th); });
    });
  }

  /* Column groups that fold: while a ranking table is wider than its page, its detail groups are
     hidden, SRCS details first, then accuracy details, then selection and units; a button shows
     or hides a group by hand (then that group is left as the reader set it). */
  var FOLD_ORDER = ["fold-srcs", "fold-acc", "fold-about"];

  function setFold(scope, fold, folded) {
    var table = scope.querySelector("table.ranking");
    table.classList.toggle("hide-" + fold, folded);
    var group = table.querySelector('th[data-group="' + fold + '"]');
    if (group) {
      var span = Number(group.getAttribute(folded ? "data-folded-span" : "data-span"));
      group.hidden = span === 0;
      if (span > 0) group.colSpan = span;
      group.classList.toggle("folded", folded);  // a folded group's label stands over one column: not shown
    }
    var button = scope.querySelector('button.fold[data-fold="' + fold + '"]');
    if (button) button.setAttribute("aria-pressed", folded ? "false" : "true");
  }

  function fits(scope) {
    var page = document.documentElement;
    var wrap = scope.querySelector(".table-wrap");
    return wrap.scrollWidth <= wrap.clientWidth + 1 && page.scrollWidth <= page.clientWidth + 1;
  }

  function fitTable(scope) {
    if (scope.offsetParent === null) return;  // hidden panel: fitted when shown
    var pinned = scope.pinned || {};
    FOLD_ORDER.forEach(function (fold) { if (!(fold in pinned)) setFold(scope, fold, false); });
    for (var i = 0; i < FOLD_ORDER.length && !fits(scope); i++) {
      if (!(FOLD_ORDER[i] in pinned)) setFold(scope, FOLD_ORDER[i], true);
    }
  }

  function fitAll() { document.querySelectorAll(".fold-scope").forEach(fitTable); }

  function makeFoldable(scope) {
    scope.pinned = {};
    scope.querySelectorAll("button.fold").forEach(function (button) {
      button.addEventListener("click", function () {
        var fold = button.getAttribute("data-fold");
        var folded = button.getAttribute("aria-pressed") === "true";
        scope.pinned[fold] = folded;
        setFold(scope, fold, folded);
      });
    });
  }

  function showPanel(id) {
    document.querySelectorAll("section.panel").forEach(function (s) { s.hidden = id !== "*" && s.id !== id; });
    fitAll();
  }

  function download(name, type, text) {
    var blob = new Blob([text], { type: type });
    var a = document.createElement("a");
    a.href = URL.createObjectURL(blob);
    a.download = name;
    document.body.appendChild(a);
    a.click();
    setTimeout(function () { URL.revokeObjectURL(a.href); a.remove(); }, 1000);
  }

  function csvCell(v) {
    if (v === null || v === undefined) return "";
    var s = String(v);
    // a text cell a spreadsheet would read as a formula gets a leading ' (numbers stay numbers)
    if (typeof v === "string" && /^[=+\-@\t\r]/.test(s)) s = "'" + s;
    return /[",\n\r]/.test(s) ? '"' + s.replace(/"/g, '""') + '"' : s;
  }

  function toCsv(data) {
    var lines = [data.columns.map(csvCell).join(",")];
    data.rows.forEach(function (row) { lines.push(data.columns.map(function (c) { return csvCell(row[c]); }).join(",")); });
    return lines.join("\n") + "\n";
  }

  document.addEventListener("DOMContentLoaded", function () {
    document.querySelectorAll("table.sortable-table").forEach(makeSortable);
    document.querySelectorAll(".fold-scope").forEach(makeFoldable);
    var resizing = null;
    window.addEventListener("resize", function () { clearTimeout(resizing); resizing = setTimeout(fitAll, 100); });
    var select = document.getElementById("panel-select");
    if (select) {
      select.addEventListener("change", function () { showPanel(select.value); });
      showPanel(select.value);
    } else {
      fitAll();
    }
    var data = window.CONTSTIM_LEADERBOARD;
    document.querySelectorAll("[data-export]").forEach(function (btn) {
      btn.addEventListener("click", function (e) {
        if (!data) return;  // no data.js: the plain link (export/...) is followed
        e.preventDefault();
        if (btn.getAttribute("data-export") === "csv") download("contstim-leaderboard.csv", "text/csv", toCsv(data));
        else download("contstim-leaderboard.json", "application/json", JSON.stringify({ columns: data.columns, rows: data.rows, matrices: data.matrices }, null, 1) + "\n");
      });
    });
  });
})();
