// Hono context variables of console routes.
import type { Session } from "./sessions.ts";

export type ConsoleEnv = {
  Variables: {
    requestId: string;
    /** null when nobody is signed in. */
    session: Session | null;
    /** The CSRF token every form on this page must send back as _csrf. */
    csrf: string;
  };
};
