// Filters of the home page's case table: a row shows when it matches every chosen
// topic, kind and tag; the count says how many rows are shown.
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
    shown.textContent = `${count} of ${rows.length} cases`;
  };
  selects.forEach((s) => s.addEventListener("change", apply));
  apply();
});
