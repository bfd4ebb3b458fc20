// Hono context variables every route can read.
export type AppEnv = { Variables: { requestId: string } };
