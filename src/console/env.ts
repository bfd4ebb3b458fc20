// Hono context variables of console routes.
import type { Session } from "./sessions.ts";

export type ConsoleEnv = {
  Variables: {
    requestId: string;
    /** null when nobody is signed in. */
    session: Session | null;
    /** The CSRF token every form on this page must send back as _csrf. */
    csrf: string;
    /** A POST's form fields, read within the limits by the guards; undefined when the body was not read (GET, the playground's image). */
    form: Record<string, string> | undefined;
  };
};
