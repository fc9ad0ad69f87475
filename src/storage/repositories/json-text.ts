// JSON held in text columns (the same on SQLite and PostgreSQL): written as text, read back whole.

/** The value a JSON text column holds, or null for SQL null. */
export function parseJson<T>(text: string | null): T | null {
  return text === null ? null : (JSON.parse(text) as T);
}

/** A value as the text of a JSON column; null stays SQL null. */
export function json(value: unknown): string | null {
  return value === null ? null : JSON.stringify(value);
}
