// The order and the checks of the published request collection: a tour that runs top to
// bottom on a fresh service with only {{baseUrl}} and {{operatorToken}} set. The
// operator creates an organization, credits it, creates an app and issues its keys; the
// keys make a test-key and a live-key cut-out; the operator looks the paid request up,
// then reissues, suspends, lifts and deletes the live key, completes a refund and
// compares the payment provider's records with the ledger.
// Each step names an operation of the route registry: its method, path, auth,
// parameters and the status it checks come from the OpenAPI document (postman.ts), so
// the collection cannot drift from it. What a step adds here is the order, the
// variables it keeps for later steps and the checks beyond status and request ID.
import { PREVIEW_PRICE_KRW } from "../billing/prices.ts";
import type { ErrorCode } from "../http/error-catalogue.ts";
import { H } from "../http/headers.ts";
import { TEST_KEY_SIZE } from "../gateway/test-key.ts";
import { check, header, headerNumber, js, json, save, variable, variableNumber, wholeNumberHeader } from "./postman-script.ts";

export interface TourStep {
  operationId: string;
  /** The request's name in the runner; default: the operation's summary. */
  name?: string;
  /** Expect this documented error instead of the operation's success answer. */
  expectError?: ErrorCode;
  /** The collection variable sent as X-Api-Key (operations secured by the app's key). */
  key?: "testKey" | "liveKey";
  /** Path parameter values; default `{{<parameter name>}}`. */
  path?: Record<string, string>;
  /** Query parameter values; default the document's example. */
  query?: Record<string, string>;
  /** A JSON body instead of the document's example; may hold {{variables}}. */
  body?: unknown;
  /** Added to the status check's message: what a wrong status most likely means here. */
  hint?: string;
  /** Checks and saves run on the answer, after the generated status and request-ID checks. */
  test?: (body: unknown) => string[];
}

export interface TourFolder {
  name: string;
  description: string;
  steps: TourStep[];
}

/** The image the cut-outs send, relative to the runner's working directory (docs/). */
export const SAMPLE_IMAGE = "pixeldrop-sample.jpg";
/** Its size in pixels: a preview cut-out keeps it (it is under the preview tier's pixels). */
const SAMPLE_SIZE = { width: 240, height: 160 };

/** Variables a person sets before running: everything else the run fills in itself. */
export const USER_VARIABLES = [
  { key: "baseUrl", value: "http://localhost:8080", description: "The service's address, without a trailing slash." },
  { key: "operatorToken", value: "", description: "The deployment's OPERATOR_TOKEN (the operator API's bearer token)." },
] as const;

/** Variables the run keeps between requests (test scripts set them). */
export const RUN_VARIABLES = {
  productStatus: "The product's sale status as read at the start.",
  orgId: "The organization the run created.",
  balanceKrw: "The organization's balance after the latest step that showed it, in KRW.",
  appId: "The app the run created.",
  testKeyId: "The app's test key ID.",
  testKey: "The app's test key text (pd_test_…): set it by hand to send the cut-out requests alone.",
  liveKeyId: "The app's live key ID (after the reissue: the new key's).",
  liveKey: "The app's live key text (pd_live_…): set it by hand to send the cut-out requests alone.",
  requestId: "X-PD-Request-Id of the live-key cut-out, for the support lookup.",
  chargedKrw: "X-PD-Charged-KRW of the live-key cut-out.",
} as const;

export type RunVariable = keyof typeof RUN_VARIABLES;

const keep = (name: RunVariable, expression: string) => save(name, expression);
const field = (path: string) => `${json}.${path}`;
const equals = (name: string, actual: string, expected: string) => check(name, [`pm.expect(${actual}).to.eql(${expected});`]);

/** The checks every successful cut-out gets: a PNG of the sample's size. */
const cutOutChecks = (): string[] => [
  ...check("a PNG", [`pm.expect(${header("Content-Type")}).to.match(/^image\\/png/);`]),
  ...check(`${H.width} x ${H.height}: the sample's ${SAMPLE_SIZE.width} x ${SAMPLE_SIZE.height} (preview keeps it)`, [
    `pm.expect(${headerNumber(H.width)}).to.eql(${SAMPLE_SIZE.width});`,
    `pm.expect(${headerNumber(H.height)}).to.eql(${SAMPLE_SIZE.height});`,
  ]),
];

const NO_IMAGE_HINT =
  `a 400 invalid_parameter naming image_file means the runner did not find ${SAMPLE_IMAGE}: ` +
  "run with docs/ as the working directory (newman --working-dir docs; Postman: Settings → General → Working directory)";

export const TOUR: TourFolder[] = [
  {
    name: "1. The service",
    description: "Is it up, ready and selling? Nothing here changes anything.",
    steps: [
      { operationId: "getHealth", test: () => equals("status ok", field("status"), js("ok")) },
      { operationId: "getReadiness", hint: "503: the model or a store is not ready yet; `checks` names it", test: () => equals("ready", field("status"), js("ready")) },
      {
        operationId: "getProductStatus",
        test: () => [
          ...equals("available (the cut-outs below need it)", field("status"), js("available")),
          keep("productStatus", field("status")),
        ],
      },
      {
        operationId: "putProductStatus",
        name: "Set the product's sale status (to what it already is)",
        body: { status: "{{productStatus}}" },
        test: () => equals("unchanged", field("status"), variable("productStatus")),
      },
    ],
  },
  {
    name: "2. A customer (operator)",
    description: "An organization with a verified owner and credit, an app with the product on, and its test and live keys. A new owner e-mail each run ({{$guid}}), so the run can be repeated.",
    steps: [
      {
        operationId: "createOrg",
        body: { email: "owner-{{$guid}}@example.com" },
        test: () => [...check("orgId and userId", [`pm.expect(${field("orgId")}).to.be.a("string").and.not.empty;`, `pm.expect(${field("userId")}).to.be.a("string").and.not.empty;`]), keep("orgId", field("orgId"))],
      },
      {
        operationId: "creditOrg",
        test: (body) => [...equals("a new organization's balance is the credit", field("balanceKrw"), js((body as { amountKrw: number }).amountKrw)), keep("balanceKrw", field("balanceKrw"))],
      },
      {
        operationId: "patchOrg",
        test: (body) => [
          ...equals("this organization", field("orgId"), variable("orgId")),
          ...equals("the new daily limit", field("dailyLimitKrw"), js((body as { dailyLimitKrw: number }).dailyLimitKrw)),
        ],
      },
      {
        operationId: "getOrg",
        test: () => [
          ...equals("the balance credited", field("balanceKrw"), variableNumber("balanceKrw")),
          ...equals("nothing held", field("availableKrw"), variableNumber("balanceKrw")),
          ...equals("no refund pending", field("refundPending"), "false"),
        ],
      },
      {
        operationId: "createApp",
        test: () => [...check("appId", [`pm.expect(${field("appId")}).to.be.a("string").and.not.empty;`]), keep("appId", field("appId"))],
      },
      {
        operationId: "patchApp",
        test: () => [...equals("this app", field("appId"), variable("appId")), ...equals("product enabled", field("productEnabled"), "true")],
      },
      issueKeyStep("test"),
      issueKeyStep("live"),
    ],
  },
  {
    name: "3. Cut-outs (the app's keys)",
    description: `X-Api-Key is {{testKey}} or {{liveKey}}. The image is ${SAMPLE_IMAGE}, read from the runner's working directory (docs/), sent with size=preview.`,
    steps: [
      {
        operationId: "getAccount",
        name: "Free calls left (test key)",
        key: "testKey",
        test: () => [...equals("a test key", field("data.kind"), js("test")), ...wholeNumberHeader(H.testRemaining)],
      },
      {
        operationId: "removeBackground",
        name: "Remove the background (test key, free)",
        key: "testKey",
        hint: NO_IMAGE_HINT,
        test: () => [
          ...cutOutChecks(),
          ...equals(`${H.testSize}: ${TEST_KEY_SIZE}`, header(H.testSize), js(TEST_KEY_SIZE)),
          ...wholeNumberHeader(H.testRemaining),
          ...check(`no ${H.chargedKrw} or ${H.balanceKrw}: a test key is never charged`, [
            `pm.expect(${header(H.chargedKrw)}).to.not.be.ok;`,
            `pm.expect(${header(H.balanceKrw)}).to.not.be.ok;`,
          ]),
        ],
      },
      {
        operationId: "removeBackground",
        name: "Remove the background (live key, preview price)",
        key: "liveKey",
        hint: NO_IMAGE_HINT,
        test: () => [
          ...cutOutChecks(),
          ...equals(`${H.chargedKrw}: the preview price`, headerNumber(H.chargedKrw), js(PREVIEW_PRICE_KRW)),
          ...equals(`${H.balanceKrw}: the balance less the charge`, headerNumber(H.balanceKrw), `${variableNumber("balanceKrw")} - ${headerNumber(H.chargedKrw)}`),
          ...check(`no ${H.testSize} on a live key`, [`pm.expect(${header(H.testSize)}).to.not.be.ok;`]),
          keep("requestId", header(H.requestId)),
          keep("chargedKrw", header(H.chargedKrw)),
          keep("balanceKrw", header(H.balanceKrw)),
        ],
      },
      {
        operationId: "getAccount",
        name: "Credit left (live key)",
        key: "liveKey",
        test: () => [...equals("a live key", field("data.kind"), js("live")), ...equals(`the balance ${H.balanceKrw} showed`, field("data.balanceKrw"), variableNumber("balanceKrw"))],
      },
    ],
  },
  {
    name: "4. Support and key care (operator)",
    description: "The paid request looked up by its X-PD-Request-Id; the live key reissued, suspended, lifted and deleted, each change seen by the next call with the key.",
    steps: [
      {
        operationId: "getRequest",
        test: () => [
          ...equals("the request asked for", field("requestId"), variable("requestId")),
          ...equals("a success", field("status"), "200"),
          ...equals("charged what X-PD-Charged-KRW said", field("chargedKrw"), variableNumber("chargedKrw")),
          ...equals("with the live key", field("keyId"), variable("liveKeyId")),
        ],
      },
      {
        operationId: "reissueKey",
        name: "Reissue the live key (the old one stays valid 7 days)",
        path: { keyId: "{{liveKeyId}}" },
        test: () => [
          ...check("a new pd_live_ key, not cached", [
            `pm.expect(${field("key")}).to.match(/^pd_live_/);`,
            `pm.expect(${field("key")}).to.not.eql(${variable("liveKey")});`,
            `pm.expect(${header("Cache-Control")}).to.eql("no-store");`,
          ]),
          ...check("the old key valid 6 to 8 days more", [
            `var days = (Date.parse(${field("previousValidUntil")}) - Date.now()) / 86400000;`,
            "pm.expect(days).to.be.within(6, 8);",
          ]),
          keep("liveKeyId", field("keyId")),
          keep("liveKey", field("key")),
        ],
      },
      {
        operationId: "suspendKey",
        name: "Suspend the new live key",
        path: { keyId: "{{liveKeyId}}" },
        test: () => [...equals("suspended", field("suspended"), "true"), ...equals("this key", field("keyId"), variable("liveKeyId"))],
      },
      { operationId: "getAccount", name: "A suspended key is refused", key: "liveKey", expectError: "key_suspended" },
      {
        operationId: "unsuspendKey",
        name: "Lift the suspension",
        path: { keyId: "{{liveKeyId}}" },
        test: () => equals("not suspended", field("suspended"), "false"),
      },
      {
        operationId: "getAccount",
        name: "The key works again",
        key: "liveKey",
        test: () => equals(`the balance ${H.balanceKrw} showed`, field("data.balanceKrw"), variableNumber("balanceKrw")),
      },
      {
        operationId: "deleteKey",
        name: "Delete the new live key",
        path: { keyId: "{{liveKeyId}}" },
        test: () => equals("this key", field("keyId"), variable("liveKeyId")),
      },
      { operationId: "getAccount", name: "A deleted key is refused", key: "liveKey", expectError: "invalid_api_key" },
    ],
  },
  {
    name: "5. Refund, reconciliation, metrics, this description (operator)",
    description:
      "The organization asks for its money back (the console sets refundPending; here the operator does) and the operator completes it. " +
      "Only money paid in through a payment provider is paid back; this organization's balance is operator credit, which stays credit.",
    steps: [
      {
        operationId: "patchOrg",
        name: "Mark a refund as requested",
        body: { refundPending: true },
        test: () => equals("refund pending", field("refundPending"), "true"),
      },
      {
        operationId: "completeRefund",
        body: {},
        test: () => [
          ...equals("operator credit is not paid back as money", field("refundedKrw"), "0"),
          ...equals("the credit stays", field("balanceKrw"), variableNumber("balanceKrw")),
          ...equals("refund no longer pending", field("refundPending"), "false"),
          ...equals("no refund made", `${field("refunds")}.length`, "0"),
        ],
      },
      {
        operationId: "getReconciliation",
        name: "Compare the payment provider's records with the ledger (change from and to for another range)",
        test: () => check("a comparison per organization and its count of differences", [
          `pm.expect(${field("organizations")}).to.be.an("array");`,
          `pm.expect(${field("unmatched")}).to.be.an("array");`,
          `pm.expect(${field("differenceCount")}).to.be.a("number");`,
        ]),
      },
      { operationId: "getMetrics", test: () => check("Prometheus text", [`pm.expect(pm.response.text()).to.include("# TYPE");`]) },
      { operationId: "getOpenApiDocument", test: () => equals("OpenAPI 3.1", field("openapi"), js("3.1.0")) },
      { operationId: "getApiReference", test: () => check("an HTML page", [`pm.expect(pm.response.text()).to.include("<html");`]) },
    ],
  },
];

/** Issues the app's key of one kind and keeps its id and text as `<kind>KeyId` / `<kind>Key`. */
function issueKeyStep(kind: "test" | "live") {
  return {
    operationId: "issueKey",
    name: `Issue the app's ${kind} key`,
    body: { kind },
    test: () => [
      ...check(`a pd_${kind}_ key, not cached`, [`pm.expect(${field("key")}).to.match(/^pd_${kind}_/);`, `pm.expect(${header("Cache-Control")}).to.eql("no-store");`]),
      keep(`${kind}KeyId`, field("keyId")),
      keep(`${kind}Key`, field("key")),
    ],
  };
}
