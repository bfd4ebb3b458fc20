// Public surface of the accounts module.
export { createAccounts, type Accounts, type AccountsDeps } from "./service.ts";
export type { OrgView, OrgPatch, UserView, TestQuotaMode } from "./orgs.ts";
export type { AppView, AppPatch } from "./apps.ts";
export { PRODUCT_STATUSES, type ProductStatus } from "./product-status.ts";
export { ORG_DAILY_LIMIT_MAX_KRW, APP_DAILY_LIMIT_MAX_KRW, APP_MONTHLY_LIMIT_MAX_KRW, APP_NAME_MAX, wonRange } from "./validate.ts";
export { createAppReview, appState, PRODUCTS, type AppReview, type AppState, type ProductId, type ReviewInfo } from "./app-review.ts";
