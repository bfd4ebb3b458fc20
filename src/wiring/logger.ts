// Structured JSON log lines on stdout, one per event. Callers pass plain objects; key
// text never reaches here (the gateway logs key labels only — test/gateway checks it).
export type Log = (event: Record<string, unknown>) => void;

const RANK = { debug: 10, info: 20, warn: 30, error: 40, silent: 100 } as const;

export function createLogger(level: keyof typeof RANK, write: (line: string) => void = (l) => console.log(l)): Log {
  const min = RANK[level];
  return (event) => {
    const lvl = (event.level as keyof typeof RANK | undefined) ?? "info";
    if ((RANK[lvl] ?? RANK.info) < min) return;
    write(JSON.stringify({ time: new Date().toISOString(), level: lvl, ...event }));
  };
}
