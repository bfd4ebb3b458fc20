// The low-balance threshold: the org owner picks an amount; the first capture that
// leaves the balance below it sends one e-mail to the owner, and no other until a
// credit (top-up or operator credit) lifts the balance back to the threshold or above
// (docs/DECISIONS.md "Low-balance e-mail"). The flag lives on the org row
// (migrations/0005_low_balance.sql) and is claimed in one UPDATE, so two captures
// finishing together still send one e-mail.
import type { Db } from "../db/index.ts";
import type { Mailer } from "../mail/index.ts";

/** Highest threshold the console accepts (100,000,000 KRW, far above any top-up). */
export const LOW_BALANCE_MAX_KRW = 100_000_000;

export async function getLowBalanceThreshold(db: Db, orgId: string): Promise<number | null> {
  const rows = await db.query<{ t: string | number | null }>("SELECT low_balance_threshold_krw AS t FROM organizations WHERE org_id = $1", [orgId]);
  const t = rows[0]?.t;
  return t === null || t === undefined ? null : Number(t);
}

/** null turns the e-mail off. A new threshold starts a fresh watch: the next capture below it sends. */
export async function setLowBalanceThreshold(db: Db, orgId: string, thresholdKrw: number | null): Promise<void> {
  await db.query("UPDATE organizations SET low_balance_threshold_krw = $2, low_balance_notified = false WHERE org_id = $1", [orgId, thresholdKrw]);
}

/** After a credit: a balance back at or above the threshold may be warned about again. */
export async function rearmLowBalance(db: Db, orgId: string): Promise<void> {
  await db.query(
    `UPDATE organizations SET low_balance_notified = false
      WHERE org_id = $1 AND low_balance_notified AND balance_krw >= low_balance_threshold_krw`,
    [orgId],
  );
}

export interface LowBalanceNotice {
  orgId: string;
  to: string;
  balanceKrw: number;
  thresholdKrw: number;
}

/** After the capture of `requestId`: claims the e-mail if this capture left the balance below the threshold. */
export async function claimLowBalanceNotice(db: Db, requestId: string): Promise<LowBalanceNotice | undefined> {
  const rows = await db.query<{ org_id: string; email: string; balance_krw: string | number; low_balance_threshold_krw: string | number }>(
    `UPDATE organizations o SET low_balance_notified = true
       FROM holds h, users u
      WHERE h.request_id = $1 AND h.state = 'captured' AND o.org_id = h.org_id AND u.user_id = o.owner_user_id
        AND o.low_balance_threshold_krw IS NOT NULL AND o.balance_krw < o.low_balance_threshold_krw
        AND NOT o.low_balance_notified
      RETURNING o.org_id, u.email, o.balance_krw, o.low_balance_threshold_krw`,
    [requestId],
  );
  const r = rows[0];
  return r ? { orgId: r.org_id, to: r.email, balanceKrw: Number(r.balance_krw), thresholdKrw: Number(r.low_balance_threshold_krw) } : undefined;
}

const won = (n: number) => `${n.toLocaleString("en")} KRW`;

/**
 * Sends the e-mail if this capture claimed it. A failed send gives the claim back, so
 * the next capture tries again; it never fails the paid call that triggered it.
 */
export async function notifyLowBalance(
  d: { db: Db; mailer: Mailer; publicUrl?: string; log: (e: Record<string, unknown>) => void },
  requestId: string,
): Promise<void> {
  const notice = await claimLowBalanceNotice(d.db, requestId);
  if (!notice) return;
  try {
    await d.mailer.send({
      to: notice.to,
      subject: `Pixeldrop: your balance is below ${won(notice.thresholdKrw)}`,
      text:
        `Your organization's balance is ${won(notice.balanceKrw)}, below the ${won(notice.thresholdKrw)} you asked us to watch.\n\n` +
        `Top up before it runs out: ${d.publicUrl ? `${d.publicUrl.replace(/\/+$/, "")}/console/credit` : "the Credit page of the console"}.\n\n` +
        "We send this once; the next one comes only after a top-up lifts the balance back to the threshold. " +
        "Change or turn off the threshold on the Limits page of the console.\n",
    });
    d.log({ level: "info", msg: "low-balance e-mail sent", orgId: notice.orgId });
  } catch (err) {
    await d.db.query("UPDATE organizations SET low_balance_notified = false WHERE org_id = $1", [notice.orgId]).catch(() => {});
    d.log({ level: "warn", msg: "low-balance e-mail failed", orgId: notice.orgId, err: err instanceof Error ? err.message : String(err) });
  }
}
