// Both drivers put the SQLSTATE in `.code`; these name the ones services handle.

function sqlState(e: unknown): string | undefined {
  if (typeof e === "object" && e !== null && "code" in e) {
    const code = (e as { code: unknown }).code;
    return typeof code === "string" ? code : undefined;
  }
  return undefined;
}

/** 23505: a unique index refused the row (e.g. an e-mail already registered). */
export function isUniqueViolation(e: unknown): boolean {
  return sqlState(e) === "23505";
}

/** 23503: a foreign key points nowhere (e.g. an app for an unknown org). */
export function isForeignKeyViolation(e: unknown): boolean {
  return sqlState(e) === "23503";
}
