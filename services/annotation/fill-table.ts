import type { Element } from "@xmldom/xmldom";
import type { ContentControl } from "./content-control.js";
import { fillCell } from "./fill-text.js";
import { textRun, W, wChild, wChildren, wElement } from "./wordml.js";

/**
 * Appends `rows` to the table inside a control: copies of its last row (its
 * cells', paragraphs' and runs' style) with `copyRowStyle`, else plain rows
 * as wide as the table's grid. Returns why it cannot, or undefined.
 */
export function fillTable(control: ContentControl, rows: string[][], copyRowStyle: boolean): string | undefined {
  const table = control.table;
  if (!table) return `${control.describe()} holds no table`;
  const grid = wChild(table, "tblGrid");
  const columns = grid ? wChildren(grid, "gridCol") : [];
  const lastRow = wChildren(table, "tr").at(-1);
  const width = columns.length || (lastRow ? wChildren(lastRow, "tc").length : 0);
  const tooWide = rows.findIndex((row) => row.length > width);
  if (tooWide >= 0) return `row ${tooWide} has ${rows[tooWide].length} cells, and the table of ${control.describe()} has ${width} columns`;
  for (const row of rows) table.appendChild(copyRowStyle && lastRow ? styledRow(lastRow, row) : plainRow(table, columns, row, width));
  control.markFilled();
  return undefined;
}

function styledRow(template: Element, values: string[]): Element {
  const row = template.cloneNode(true) as Element;
  wChildren(row, "tc").forEach((cell, i) => fillCell(cell, values[i] ?? ""));
  return row;
}

function plainRow(table: Element, columns: Element[], values: string[], width: number): Element {
  const document = table.ownerDocument!;
  const row = wElement(document, "tr");
  for (let i = 0; i < width; i++) {
    const cell = wElement(document, "tc");
    const columnWidth = columns[i]?.getAttributeNS(W, "w") ?? columns[i]?.getAttribute("w:w");
    if (columnWidth) {
      const properties = wElement(document, "tcPr");
      const cellWidth = wElement(document, "tcW");
      cellWidth.setAttributeNS(W, "w:w", columnWidth);
      cellWidth.setAttributeNS(W, "w:type", "dxa");
      properties.appendChild(cellWidth);
      cell.appendChild(properties);
    }
    const paragraph = wElement(document, "p");
    paragraph.appendChild(textRun(document, values[i] ?? "", undefined));
    cell.appendChild(paragraph);
    row.appendChild(cell);
  }
  return row;
}
