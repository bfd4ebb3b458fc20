// Public surface of the keys module.
export {
  createKeyService,
  suspendedTitle,
  type KeyService,
  type KeyServiceDeps,
  type LookupResult,
  type IssueResult,
  type ReissueResult,
  type KeyChangeResult,
} from "./service.ts";
export { loadOrCreatePepper, createKeyHasher, constantTimeEqual, secretMatcher, type KeyHasher } from "./hash.ts";
export { generateKey, isWellFormedKey, keyLabel, type KeyKind } from "./format.ts";
export { rejectReason, REISSUE_GRACE_MS, DORMANT_AFTER_MS, type KeyRejectReason } from "./states.ts";
export type { KeyRecord, KeyApp, KeyOrg } from "./records.ts";
