// Hono context variables every route can read.
export type AppEnv = {
  Variables: {
    requestId: string;
    /**
     * The headers every non-page answer carries (security-headers.ts sets them): a route
     * that puts them in its answers' own headers (the public API's) spares the
     * middleware from stamping them onto each answer afterwards.
     */
    answerHeaders?: Readonly<Record<string, string>>;
  };
};
