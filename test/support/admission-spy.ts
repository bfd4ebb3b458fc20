// Tells, while a call is still running, whether the product admitted it: wraps the
// service's admission (the product app calls it through the same object) and records
// each decision by queue key. A refused call answers at once; an admitted one only
// when its job is done, so waiting for the answer would not tell the moment.
import type { Admission } from "../../src/product/admission.ts";

export interface AdmissionSpy {
  /** Starts `send` and resolves once the call is either admitted or answered. */
  attempt(queueKey: string, send: () => Promise<Response>): Promise<{ admitted: boolean; done: Promise<Response> }>;
}

export function spyAdmission(admission: Admission): AdmissionSpy {
  const admit = admission.admit.bind(admission);
  const seen: { key: string; ok: boolean }[] = [];
  admission.admit = (key, deadline, kind) => {
    const r = admit(key, deadline, kind);
    seen.push({ key, ok: r.ok });
    return r;
  };
  return {
    async attempt(queueKey, send) {
      const mark = seen.length;
      const done = send();
      let answered = false;
      void done.then(() => (answered = true), () => (answered = true));
      for (;;) {
        const mine = seen.slice(mark).find((s) => s.key === queueKey);
        if (mine?.ok) return { admitted: true, done };
        if (answered) return { admitted: false, done };
        await new Promise((r) => setTimeout(r, 5));
      }
    },
  };
}
