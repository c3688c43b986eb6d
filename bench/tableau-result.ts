/**
 * The bench's Tableau download_workbook result: one text block of 10 MiB of JSON holding a 7 MiB PDF
 * as base64 next to ordinary rows (bench/mcp-child.ts and bench/gateway.ts use it).
 */
import { randomBytes } from 'node:crypto';
import { fileTypeFromBuffer } from 'file-type';

const MiB = 1024 * 1024;
const PDF_BYTES = 7 * MiB;
const INPUT_CHARS = 10 * MiB;

/** `%PDF-1.7` header, random body, `%%EOF` trailer: file-type (and so the transformer) sees a PDF. */
export async function makePdf(): Promise<Buffer> {
  const head = Buffer.from('%PDF-1.7\n');
  const tail = Buffer.from('%%EOF\n');
  const pdf = Buffer.concat([head, randomBytes(PDF_BYTES - head.length - tail.length), tail]);
  const type = await fileTypeFromBuffer(pdf);
  if (type?.mime !== 'application/pdf')
    throw new Error(`file-type sees the bench PDF as ${type?.mime ?? 'nothing'}, not application/pdf`);
  return pdf;
}

/** The workbook JSON: the base64 PDF, then as many small rows as bring the text to 10 MiB. */
export function workbookText(b64: string): string {
  const regions = ['EMEA', 'APAC', 'North America', 'LATAM'];
  const products = ['Widget', 'Gadget', 'Gizmo', 'Doohickey', 'Sprocket'];
  const row = (i: number) => ({
    id: i,
    region: regions[i % regions.length]!,
    product: `${products[i % products.length]} ${(i * 7) % 100}`,
    quarter: `2026-Q${(i % 4) + 1}`,
    units: (i * 7919) % 1000,
    revenue: ((i * 104_729) % 1_000_000) / 100,
  });
  const rows: ReturnType<typeof row>[] = [];
  // `[]` holds the first row without a comma; every further row adds its length plus one.
  let chars = JSON.stringify({ content: b64, name: 'Sales Dashboard', format: 'pdf', rows }).length - 1;
  for (let i = 0; ; i++) {
    const next = JSON.stringify(row(i)).length + 1;
    if (chars + next > INPUT_CHARS) break;
    rows.push(row(i));
    chars += next;
  }
  const text = JSON.stringify({ content: b64, name: 'Sales Dashboard', format: 'pdf', rows });
  if (Math.abs(text.length - INPUT_CHARS) > INPUT_CHARS / 100)
    throw new Error(`the workbook text is ${text.length} chars, not 10 MiB ± 1%`);
  return text;
}
