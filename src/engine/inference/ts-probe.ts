// Imported by worker-bootstrap.mjs to learn whether this thread can load TypeScript
// already. Holds nothing.
export {};
