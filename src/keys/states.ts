// Deciding whether a stored key may be used right now (interface spec §3, §5).
// Pure, so every state can be tested without a database.

export const REISSUE_GRACE_MS = 7 * 24 * 60 * 60 * 1000;
export const DORMANT_AFTER_MS = 180 * 24 * 60 * 60 * 1000;

export type KeyRejectReason =
  | "missing"
  | "malformed"
  | "unknown"
  | "deleted"
  | "expired"
  | "dormant"
  | "suspended";

export interface KeyStateInput {
  createdAt: number;
  lastUsedAt: number | null;
  expiresAt: number | null;
  deletedAt: number | null;
  appDeletedAt: number | null;
  suspendedAt: number | null;
}

/**
 * null when usable, else why not. When several apply, the most final one is named:
 * deleted, then expired, then suspended (an operator decision the customer should
 * hear about), then dormant.
 */
export function rejectReason(k: KeyStateInput, now: number): KeyRejectReason | null {
  if (k.deletedAt !== null || k.appDeletedAt !== null) return "deleted";
  if (k.expiresAt !== null && k.expiresAt <= now) return "expired";
  if (k.suspendedAt !== null) return "suspended";
  // Never used: the 180 days count from issue.
  if (now - (k.lastUsedAt ?? k.createdAt) > DORMANT_AFTER_MS) return "dormant";
  return null;
}
