// The keys of one app: prefix…last 4, created, last used, state, and actions. The
// key text itself is never available here (only its hash is stored).
import type { KeyRecord } from "../../keys/index.ts";
import { rejectReason } from "../../keys/index.ts";
import { when } from "./layout.tsx";
import { ScrollRegion } from "./scroll-region.tsx";

export function keyStateText(k: KeyRecord, now: number): string {
  const reason = rejectReason(
    { createdAt: k.createdAt, lastUsedAt: k.lastUsedAt, expiresAt: k.expiresAt, deletedAt: null, appDeletedAt: null, suspendedAt: k.suspendedAt },
    now,
  );
  if (reason === "suspended") return "Suspended by the operator";
  if (reason === "expired") return "Expired";
  if (reason === "dormant") return "Dormant (unused 180 days)";
  if (k.replacedBy !== null && k.expiresAt !== null) return `Replaced; valid until ${when(k.expiresAt)}`;
  return "Valid";
}

export function KeyTable({ keys, now }: { keys: KeyRecord[]; now: number; csrf: string }) {
  if (keys.length === 0) return <p>No keys.</p>;
  return (
    <ScrollRegion label="Keys">
      <table>
        <thead>
          <tr>
            <th scope="col">Type</th><th scope="col">Key</th><th scope="col">Created</th><th scope="col">Last used</th>
            <th scope="col">State</th><th scope="col">Actions</th>
          </tr>
        </thead>
        <tbody>
          {keys.map((k) => (
            <tr>
              <td>{k.kind}</td>
              <td><code>{k.label}</code></td>
              <td>{when(k.createdAt)}</td>
              <td>{when(k.lastUsedAt)}</td>
              <td>{keyStateText(k, now)}</td>
              <td>
                {k.suspendedAt !== null ? (
                  // The operator's decision: neither reissued nor deleted until it is lifted.
                  <span class="hint">Contact support</span>
                ) : (
                  <>
                    {k.replacedBy === null ? (
                      <a href={`/console/keys/${k.keyId}/reissue`} aria-label={`Reissue ${k.kind} key ${k.label}`}>Reissue</a>
                    ) : null}{" "}
                    <a href={`/console/keys/${k.keyId}/delete`} aria-label={`Delete ${k.kind} key ${k.label}`}>Delete</a>
                  </>
                )}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </ScrollRegion>
  );
}
