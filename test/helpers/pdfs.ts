/** PDFs the views' tests share: the reference extractor, and a PDF that takes seconds to parse. */
import { execFileSync } from 'node:child_process';
import { writePdf } from '../fixtures/views/make-fixtures.js';

/** Debian's pdftotext (poppler-utils), the reference for report.pdf's text, where it is installed. */
export const hasPdftotext = (() => {
  try {
    execFileSync('pdftotext', ['-v'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
})();
if (process.env.CI && !hasPdftotext)
  throw new Error('CI needs poppler-utils (pdftotext), the reference for the PDF fixtures: .ci/run installs it');

/** The words of a text in order: what two extractors agree on whatever their spacing and line breaks. */
export const words = (text: string) => text.split(/\s+/).filter(Boolean);

/**
 * A PDF of `pages` pages, each drawing `lines` separate runs of text (one content stream shared by
 * every page): a small file whose text takes pdf.js about 0.1 s a page.
 */
export function slowPdf(pages: number, lines = 2000): Uint8Array {
  const ops = ['BT /F1 1 Tf'];
  for (let i = 0; i < lines; i++) ops.push(`1 0 0 1 10 ${(i % 700) + 10} Tm (run ${i} of a costly page) Tj`);
  ops.push('ET');
  const content = ops.join('\n');
  const page =
    '<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << /Font << /F1 3 0 R >> >> /Contents 4 0 R >>';
  const kids = Array.from({ length: pages }, (_, i) => `${i + 5} 0 R`).join(' ');
  return new Uint8Array(
    writePdf(
      [
        '<< /Type /Catalog /Pages 2 0 R >>',
        `<< /Type /Pages /Kids [${kids}] /Count ${pages} >>`,
        '<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>',
        `<< /Length ${content.length} >>\nstream\n${content}\nendstream`,
        ...Array<string>(pages).fill(page),
      ],
      1,
    ),
  );
}
