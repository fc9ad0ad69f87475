// Dollars as the dashboard shows them: cents for sums of a cent or more, else to the micro-dollar.
export function formatUsd(value: number): string {
  if (value === 0) return '$0';
  return Math.abs(value) >= 0.01 ? `$${value.toFixed(2)}` : `$${value.toFixed(6)}`;
}
