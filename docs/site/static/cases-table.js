// Filters of the home page's case table: a row shows when it matches every chosen topic, kind,
// tag and symptom; the count says how many rows are shown. The choice lives in the page's
// address (index.html?topic=autograd&kind=silent), so a filtered table can be linked to and a
// reload or the back button keeps it.
document.addEventListener("DOMContentLoaded", () => {
  const table = document.getElementById("cases-table");
  if (!table) return;
  const selects = Array.from(document.querySelectorAll("select[data-filter]"));
  const shown = document.getElementById("cases-shown");
  const rows = Array.from(table.tBodies[0].rows);
  const matches = (row, name, value) =>
    !value || (name === "tag" ? row.dataset.tags.split(" ").includes(value) : row.dataset[name] === value);
  const apply = () => {
    let count = 0;
    for (const row of rows) {
      row.hidden = !selects.every((s) => matches(row, s.dataset.filter, s.value));
      if (!row.hidden) count += 1;
    }
    shown.textContent = document.documentElement.lang.startsWith("zh")
      ? `显示 ${count} / ${rows.length} 个案例` : `${count} of ${rows.length} cases`;
  };
  const readAddress = () => {
    const params = new URLSearchParams(window.location.search);
    for (const s of selects) {
      const wanted = params.get(s.dataset.filter) || "";
      // a value the select does not offer (a stale link) is ignored, not half-applied
      s.value = Array.from(s.options).some((o) => o.value === wanted) ? wanted : "";
    }
  };
  const writeAddress = () => {
    const params = new URLSearchParams(window.location.search);
    for (const s of selects) {
      if (s.value) params.set(s.dataset.filter, s.value);
      else params.delete(s.dataset.filter);
    }
    const query = params.toString();
    const url = window.location.pathname + (query ? `?${query}` : "") + window.location.hash;
    window.history.replaceState(null, "", url);
  };
  selects.forEach((s) => s.addEventListener("change", () => { apply(); writeAddress(); }));
  window.addEventListener("popstate", () => { readAddress(); apply(); });
  readAddress();
  apply();
});
