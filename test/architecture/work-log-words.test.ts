// The repository says what is true now; its history lives in git. This check reads
// every tracked text file (package-lock.json and binary files aside) and fails on the
// words of a work log: numbered work periods, tracker numbers, and the roles of the
// people who did the work. Each hit is printed as file:line with the phrase.
//
// The patterns are assembled from pieces (a word and its number or role kept apart in
// this source) so that this file does not match itself. "Helper" is ordinary code
// language (helper threads, helper functions); only the sense of a person who did
// something is matched, by the verbs and nouns that follow it.
import { test } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

const ROOT = fileURLToPath(new URL("../../", import.meta.url));

const word = (...parts: string[]) => parts.join("");
const SESSION = word("ses", "sion");
const ISSUE = word("is", "sue");
const HELPER = word("hel", "per");
const ENGINEER = word("engi", "neer");
const LEAD = word("le", "ad");
const TASK_ROLE = word("coordi", "nator");

/** What a person does or hands over, after "a/the/other helper(s)". */
const PERSON_VERBS = [
  "said", "says", "found", "noticed", "noted", "measured", "reported", "ran", "re-ran",
  "suggested", "asked", "reviewed", "was reading", "were running",
].join("|");
const PERSON_NOUNS = ["run", "runs", "re-run", "report", "review", "measurement", "numbers", "code", "suites?"].join("|");

/** Each kind of work-log phrase, with the name printed on a hit. */
const PATTERNS: Array<[string, RegExp]> = [
  ["numbered work period", new RegExp(`\\b${SESSION}s?\\s+#?\\d+\\b`, "i")],
  ["tracker number", new RegExp(`\\b${ISSUE}s?\\s+#?\\d+\\b`, "i")],
  ["item of a tracker entry", new RegExp(`\\bitems?\\s+\\d+\\s+of\\s+${ISSUE}`, "i")],
  ["a person's role", new RegExp(`\\bthe\\s+${LEAD}\\b(?!\\s+(?:time|byte|frame|image|row|zero)s?\\b)`, "i")],
  ["a person's role", new RegExp(`\\b(?:another|other|the other)\\s+${ENGINEER}s?\\b`, "i")],
  ["a person's role", new RegExp(`\\b${TASK_ROLE}\\b`, "i")],
  ["a person's role", new RegExp(`\\b(?:a|the|another|other)\\s+${HELPER}s?(?:'s|s')?\\s+(?:${PERSON_VERBS})\\b`, "i")],
  ["a person's role", new RegExp(`\\b(?:a|the|another|other)\\s+${HELPER}s?(?:'s|s')\\s+(?:${PERSON_NOUNS})\\b`, "i")],
  ["a person's role", new RegExp(`\\bby\\s+(?:a|the|another|other)\\s+${HELPER}s?\\b(?!\\s+(?:thread|function|module|worker|process)s?\\b)`, "i")],
];

/** Not text we write: the lock file is npm's, and binary files have no sentences. */
const SKIP = new Set(["package-lock.json"]);

function trackedFiles(): string[] {
  const out = execFileSync("git", ["ls-files", "-z"], { cwd: ROOT, encoding: "utf8", maxBuffer: 64 * 1024 * 1024 });
  return out.split("\0").filter((f) => f && !SKIP.has(f));
}

function textOf(file: string): string | undefined {
  let bytes: Buffer;
  try {
    bytes = readFileSync(join(ROOT, file));
  } catch {
    return undefined; // tracked but removed from the working tree (a move not yet committed)
  }
  if (bytes.subarray(0, 8000).includes(0)) return undefined; // binary
  return bytes.toString("utf8");
}

function workLogHits(file: string, text: string): string[] {
  const hits: string[] = [];
  text.split("\n").forEach((line, i) => {
    for (const [kind, pattern] of PATTERNS) {
      const m = pattern.exec(line);
      if (m) hits.push(`${file}:${i + 1}: ${kind}: "${m[0]}"`);
    }
  });
  return hits;
}

test("the patterns catch each kind of work-log phrase and leave code language alone", () => {
  const caught = [
    `since ${SESSION} 6`,
    `(${ISSUE} 14)`,
    `${ISSUE} #14`,
    `item 5 of ${ISSUE} 13`,
    `${"The"} ${LEAD}'s re-run`,
    `${"another"} ${ENGINEER} was reading code`,
    `told the ${TASK_ROLE}`,
    `a ${HELPER} measured it`,
    `seven other ${HELPER}s were running test suites`,
    `other ${HELPER}s' code`,
    `found by a ${HELPER}`,
  ];
  for (const line of caught) assert.notDeepEqual(workLogHits("x", line), [], line);
  const clean = [
    `with a ${HELPER} thread the PNG is the same bytes`,
    `A ${HELPER} that fails to start leaves the worker inline`,
    `THREADS_PER_${SESSION.toUpperCase()} 4`,
    `an on-call ${ENGINEER} sees the same thing`,
    `the ${HELPER}'s rows would be lost`,
    `what the ${HELPER} wrote into it would be lost`,
    `written by a ${HELPER} function`,
    `the ${LEAD}ing edge`,
  ];
  for (const line of clean) assert.deepEqual(workLogHits("x", line), [], line);
});

test("no tracked file carries a work-log phrase", () => {
  const hits: string[] = [];
  let read = 0;
  for (const file of trackedFiles()) {
    const text = textOf(file);
    if (text === undefined) continue;
    read++;
    hits.push(...workLogHits(file, text));
  }
  assert.ok(read > 100, `read ${read} tracked text files: is this a git checkout?`);
  if (hits.length) assert.fail(`${hits.length} work-log phrases (say what is true now; history lives in git):\n${hits.join("\n")}`);
});
