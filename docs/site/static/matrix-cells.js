// The matrix's cells on a touch screen: a tap (or Enter on a focused cell) shows the cell's
// words and the record's text under its table; hovering still shows them as a tooltip.
document.addEventListener("DOMContentLoaded", () => {
  for (const table of document.querySelectorAll("table.pitfalls-matrix")) {
    const panel = table.closest(".matrix-block")?.querySelector(".matrix-detail");
    if (!panel) continue;
    const show = (cell) => {
      const row = cell.parentElement.querySelector("th");
      const column = table.tHead.rows[0].cells[cell.cellIndex];
      panel.textContent = "";
      const head = document.createElement("strong");
      head.textContent = `${row ? row.textContent : ""}, torch ${column ? column.title || column.textContent : ""}: `;
      panel.append(head, cell.dataset.detail);
      table.querySelectorAll("td.selected").forEach((c) => c.classList.remove("selected"));
      cell.classList.add("selected");
    };
    table.addEventListener("click", (event) => {
      const cell = event.target.closest("td[data-detail]");
      if (cell) show(cell);
    });
    table.addEventListener("keydown", (event) => {
      const cell = event.target.closest("td[data-detail]");
      if (cell && (event.key === "Enter" || event.key === " ")) { event.preventDefault(); show(cell); }
    });
  }
});
