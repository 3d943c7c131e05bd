/** A generated accounts file for the demo: the header the service expects for accounts, then N rows. */
const SAMPLE_HEADER = ['Account Name', 'Account Domain'] as const;

export function sampleAccountsCsv(rows: number): string {
  const lines = [SAMPLE_HEADER.join(',')];
  for (let i = 1; i <= rows; i++) {
    const n = String(i).padStart(6, '0');
    lines.push(`Demo Account ${n},account-${n}.example.com`);
  }
  return `${lines.join('\n')}\n`;
}
