// Public surface of the db module.
export type { Db, Row, OpenDbOptions, QueryOptions } from "./types.ts";
export { openDb } from "./open.ts";
export { migrate, loadMigrations, DEFAULT_MIGRATIONS_DIR, type MigrateResult } from "./migrate.ts";
export { isUniqueViolation, isForeignKeyViolation } from "./errors.ts";
export { newId, randomBase62, type IdPrefix } from "./random-id.ts";
