/** One numbered schema change. Once released a migration never changes: add a new one. */
export interface Migration {
  version: number;
  name: string;
  sql: string;
}
