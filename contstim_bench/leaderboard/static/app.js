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
    Array.prototype.forEach.call(table.tHead.rows[0].cells, function (h) { h.removeAttribute("aria-sort"); });
    th.setAttribute("aria-sort", descending ? "descending" : "ascending");
  }

  function makeSortable(table) {
    Array.prototype.forEach.call(table.tHead.rows[0].cells, function (th, col) {
      if (!th.classList.contains("sortable")) return;
      th.tabIndex = 0;
      th.addEventListener("click", function () { sortTable(table, col, th); });
      th.addEventListener("keydown", function (e) { if (e.key === "Enter") sortTable(table, col, th); });
    });
  }

  function showPanel(id) {
    document.querySelectorAll("section.panel").forEach(function (s) { s.hidden = id !== "*" && s.id !== id; });
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
    var select = document.getElementById("panel-select");
    if (select) {
      select.addEventListener("change", function () { showPanel(select.value); });
      showPanel(select.value);
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
