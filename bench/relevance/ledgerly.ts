/**
 * A relevance set for recall (RFC-006 "How the relevance set was built"): past runs of Recall on a
 * made-up invoicing product, "ledgerly", and new events with the past runs a person would want
 * recalled for each. Events come in three kinds:
 *  - direct: the event shares a file name, an error line or the distinctive words of the past run;
 *  - paraphrased: the same problem in other words, as a different person would report it (no
 *    shared file name, error string or distinctive phrase);
 *  - unrelated: a new problem, often in the same area of the product; no past run should be recalled.
 * The events were written before the ranking was tuned, by topic, not by looking at the ranker's
 * vocabulary.
 */

export interface PastRun {
  id: string;
  threadKey: string;
  event: string;
  title: string;
  request: string;
  answer: string;
  labels?: string[];
  paths?: string[];
  /** Days before the events. */
  age: number;
}

export interface RelevanceEvent {
  id: string;
  kind: 'direct' | 'paraphrased' | 'unrelated';
  title: string;
  text: string;
  labels?: string[];
  paths?: string[];
  threadKey?: string;
  /** The past runs a person would want recalled. */
  relevant: string[];
}

const run = (id: string, threadKey: string, event: string, title: string, request: string, answer: string, o: Partial<PastRun> = {}): PastRun => ({
  id,
  threadKey,
  event,
  title,
  request,
  answer,
  age: 30,
  ...o,
});

export const PAST_RUNS: PastRun[] = [
  run('r01', 'issue-101', 'issues opened #101', 'SSO login loops back to the login page on Safari', 'Investigate this issue.', 'The SAML callback sets the session cookie with SameSite=None but without Secure in src/auth/saml.ts:42, and Safari drops such cookies, so the user is sent back to login. Set Secure on the cookie.', { labels: ['bug', 'auth'], paths: ['src/auth/saml.ts'], age: 60 }),
  run('r29', 'pr-118', 'pull_request opened #118', 'Set Secure on the SAML session cookie', 'Review this pull request.', 'The change adds secure: true to the cookie options in src/auth/saml.ts. It fixes the Safari redirect loop from #101. Also add a test for the cookie flags.', { labels: ['auth'], paths: ['src/auth/saml.ts', 'test/auth/saml.spec.ts'], age: 55 }),
  run('r02', 'issue-102', 'issues opened #102', 'Google sign-in fails with invalid_grant for some users', 'Investigate this issue.', 'Error: invalid_grant comes from the token exchange in src/auth/oauth/google.ts:77 when the server clock is more than 5 minutes off. The runner hosts had NTP disabled. Allow a clock tolerance and fix NTP.', { labels: ['bug', 'auth'], paths: ['src/auth/oauth/google.ts'] }),
  run('r03', 'issue-103', 'issues opened #103', 'Password reset emails never arrive', 'Investigate this issue.', 'src/notifications/email.ts connects to the SMTP relay on port 465 with STARTTLS, which the relay rejects; the error is swallowed. Use port 587 with STARTTLS or 465 with implicit TLS, and log send failures.', { labels: ['bug', 'email'], paths: ['src/notifications/email.ts'] }),
  run('r04', 'issue-104', 'issues opened #104', 'CSV export drops the header row', 'Investigate this issue.', 'src/export/csv.ts:18 calls rows.slice(1) to skip an empty first row, but the header is the first row, so it is lost. Remove the slice and test the first line.', { labels: ['bug', 'export'], paths: ['src/export/csv.ts'], age: 90 }),
  run('r28', 'pr-131', 'pull_request opened #131', 'Stream the CSV writer', 'Review this pull request.', 'Moving src/export/csv.ts to a stream is fine, but the new writer writes rows before the header is set, which brings back the missing header bug of #104. Write the header first.', { labels: ['export', 'performance'], paths: ['src/export/csv.ts', 'src/export/stream.ts'], age: 20 }),
  run('r05', 'issue-105', 'issues opened #105', 'Invoice PDF total is off by one cent', 'Investigate this issue.', 'src/billing/invoice-pdf.ts sums line amounts after Math.floor on each cent value, so totals can be a cent low. Sum in integer cents and round once.', { labels: ['bug', 'billing'], paths: ['src/billing/invoice-pdf.ts'] }),
  run('r06', 'issue-106', 'issues opened #106', 'Duplicate charges when the Stripe webhook is retried', 'Investigate this issue.', 'src/billing/stripe-webhook.ts captures the payment on every delivery of payment_intent.succeeded; Stripe retries deliveries, so a slow response leads to a second capture. Store the event id and skip events already handled (idempotency).', { labels: ['bug', 'billing'], paths: ['src/billing/stripe-webhook.ts'], age: 120 }),
  run('r27', 'pr-140', 'pull_request opened #140', 'Retry payment capture on timeout', 'Review this pull request.', 'Retrying the capture in src/billing/capture.ts without an idempotency key can charge the customer twice, the same failure as #106. Pass an idempotency key to Stripe.', { labels: ['billing'], paths: ['src/billing/capture.ts'], age: 15 }),
  run('r07', 'issue-107', 'issues opened #107', 'Scheduled reports go out at the wrong hour after DST', 'Investigate this issue.', 'src/scheduler/cron.ts computes the next run in the server local time zone; after the daylight saving change the weekly report fires an hour late. Compute schedules in UTC or in the account time zone.', { labels: ['bug', 'reports'], paths: ['src/scheduler/cron.ts'] }),
  run('r08', 'issue-108', 'issues opened #108', 'upload.spec.ts times out in CI', 'Investigate this issue.', 'Error: Timeout of 5000ms exceeded. test/upload.spec.ts waits for the S3 mock to start without awaiting its ready promise; under CI load it is not ready in time. Await mock.ready() in beforeAll.', { labels: ['flaky-test', 'ci'], paths: ['test/upload.spec.ts'] }),
  run('r26', 'schedule-weekly-flaky-tests', 'schedule', 'Weekly flaky test report', 'List the tests that failed and then passed on retry this week, and why.', 'Flaky this week: test/upload.spec.ts (S3 mock not awaited, see #108) failed 4 times; test/realtime/ws.spec.ts failed twice on a port already in use.', { paths: ['test/upload.spec.ts', 'test/realtime/ws.spec.ts'], age: 7 }),
  run('r09', 'issue-109', 'issues opened #109', 'Memory keeps growing in the websocket server', 'Investigate this issue.', 'src/realtime/ws-server.ts adds a message listener to the shared event bus for every connection and never removes it on close, so closed sockets stay referenced and the heap grows. Remove the listener in the close handler.', { labels: ['bug', 'performance'], paths: ['src/realtime/ws-server.ts'] }),
  run('r10', 'issue-110', 'issues opened #110', 'Search finds nothing for names with accents', 'Investigate this issue.', 'src/search/normalize.ts lower-cases queries but does not normalize Unicode, so "José" in NFD never equals the NFC value stored. Normalize both to NFD and strip combining marks.', { labels: ['bug', 'search'], paths: ['src/search/normalize.ts'] }),
  run('r11', 'issue-111', 'issues opened #111', 'Rate limiter blocks everyone behind a corporate proxy', 'Investigate this issue.', 'src/api/rate-limit.ts keys the limit by the socket address; behind a proxy all users share one address and hit 429 together. Trust X-Forwarded-For from the load balancer only, and key by user when signed in.', { labels: ['bug', 'api'], paths: ['src/api/rate-limit.ts'] }),
  run('r12', 'issue-112', 'issues opened #112', 'Chart labels invisible in dark mode', 'Investigate this issue.', 'src/ui/charts/theme.ts hardcodes #000 for axis and label text; on the dark background it cannot be seen. Take the text color from the theme tokens.', { labels: ['bug', 'ui'], paths: ['src/ui/charts/theme.ts'] }),
  run('r13', 'issue-113', 'issues opened #113', 'Migration 0042 fails on Postgres 15', 'Investigate this issue.', 'ERROR: CREATE INDEX CONCURRENTLY cannot run inside a transaction block. migrations/0042_add_invoice_index.sql runs in the migrator transaction. Mark the migration as non-transactional.', { labels: ['bug', 'database'], paths: ['migrations/0042_add_invoice_index.sql'] }),
  run('r14', 'issue-114', 'issues opened #114', 'Avatar upload rejects PNG files over 2 MB', 'Investigate this issue.', 'src/uploads/limits.ts sets the avatar limit to 2 MB; phone photos are larger. Raise it to 10 MB and resize on the server.', { labels: ['enhancement'], paths: ['src/uploads/limits.ts'] }),
  run('r15', 'issue-115', 'issues opened #115', 'Pagination skips an item on page 2', 'Investigate this issue.', 'src/api/pagination.ts computes offset = page * size + 1, off by one: the first item of each later page is skipped. Use (page - 1) * size with 1-based pages.', { labels: ['bug', 'api'], paths: ['src/api/pagination.ts'] }),
  run('r16', 'issue-116', 'issues opened #116', 'German translations missing on the settings page', 'Investigate this issue.', 'src/ui/settings/Settings.tsx uses keys settings.billing.* that src/i18n/de.json lacks, so English shows. Add the keys and a CI check for missing translation keys.', { labels: ['i18n'], paths: ['src/ui/settings/Settings.tsx', 'src/i18n/de.json'] }),
  run('r17', 'issue-117', 'issues opened #117', 'Webhook signature verification fails for every delivery', 'Investigate this issue.', 'src/webhooks/verify.ts computes the HMAC over JSON.stringify(req.body), not over the raw body bytes, so whitespace differences break it. Verify against the raw body.', { labels: ['bug', 'webhooks'], paths: ['src/webhooks/verify.ts'] }),
  run('r18', 'issue-119', 'issues opened #119', 'Dashboard takes 5 seconds to load', 'Investigate this issue.', 'src/api/dashboard.ts loads each invoice customer in a loop: one query per invoice (N+1). Join customers in the invoice query; the page loads in 300 ms on the staging data.', { labels: ['performance'], paths: ['src/api/dashboard.ts'] }),
  run('r19', 'issue-120', 'issues opened #120', 'Admins get 403 on the reports page after the roles refactor', 'Investigate this issue.', 'src/auth/rbac.ts compares role names case-sensitively and the refactor renamed admin to Admin; the reports route checks "admin". Compare case-insensitively or use the role enum.', { labels: ['bug', 'auth'], paths: ['src/auth/rbac.ts'] }),
  run('r20', 'issue-121', 'issues opened #121', 'npm install fails with ERESOLVE after the React upgrade', 'Investigate this issue.', 'npm ERR! ERESOLVE unable to resolve dependency tree: react-datepicker 4 wants react 17. Upgrade react-datepicker to 6 in package.json.', { labels: ['dependencies'], paths: ['package.json'] }),
  run('r21', 'issue-122', 'issues opened #122', 'Invoice email shows HTML entities', 'Investigate this issue.', 'src/notifications/templates/invoice.hbs escapes the line item HTML twice ({{ }} around pre-escaped text), so &amp; appears in emails. Use the triple-stash for the pre-rendered block.', { labels: ['bug', 'email'], paths: ['src/notifications/templates/invoice.hbs'] }),
  run('r22', 'issue-123', 'issues opened #123', 'Duplicate invoice numbers under load', 'Investigate this issue.', 'duplicate key value violates unique constraint "invoices_number_key". src/billing/numbering.ts reads MAX(number) + 1 without a lock, so concurrent requests take the same number. Use a database sequence.', { labels: ['bug', 'billing'], paths: ['src/billing/numbering.ts'] }),
  run('r23', 'issue-124', 'issues opened #124', 'Sessions expire after five minutes', 'Investigate this issue.', 'src/auth/session.ts passes maxAge: 86400 to the cookie library, which reads milliseconds; the session ends after 86 seconds of idle time plus the refresh window. Pass 86400 * 1000.', { labels: ['bug', 'auth'], paths: ['src/auth/session.ts'] }),
  run('r24', 'issue-125', 'issues opened #125', 'Checkout button hidden behind the keyboard on iOS', 'Investigate this issue.', 'src/ui/checkout/CheckoutForm.tsx pins the pay button with position: fixed; bottom: 0, and iOS Safari does not move fixed elements above the on-screen keyboard. Put the button in the form flow on small screens.', { labels: ['bug', 'mobile'], paths: ['src/ui/checkout/CheckoutForm.tsx'] }),
  run('r25', 'schedule-weekly-dependency-audit', 'schedule', 'Weekly dependency audit', 'Run npm audit and report what needs upgrading.', 'npm audit: lodash 4.17.20 has a prototype pollution advisory (high). Upgrade to 4.17.21; nothing else above moderate.', { paths: ['package.json'], age: 7 }),
  run('r30', 'issue-126', 'issues opened #126', 'Product prices stale after an update', 'Investigate this issue.', 'src/cache/prices.ts caches prices for 24 hours and the update handler does not invalidate the key. Delete the cache entry in the price update path.', { labels: ['bug'], paths: ['src/cache/prices.ts'] }),
  run('r31', 'issue-127', 'issues opened #127', 'Digest job crashes for deleted users', 'Investigate this issue.', "TypeError: Cannot read properties of undefined (reading 'email') at buildDigest (src/notifications/digest.ts:33). Deleted users stay in the subscriber list. Skip subscribers whose user is gone.", { labels: ['bug', 'email'], paths: ['src/notifications/digest.ts'] }),
  run('r32', 'issue-128', 'issues opened #128', 'Screen reader cannot read the invoice table', 'Investigate this issue.', 'src/ui/invoices/InvoiceTable.tsx renders the table with divs and no header cells; screen readers announce no columns. Use a table with th scope="col".', { labels: ['accessibility'], paths: ['src/ui/invoices/InvoiceTable.tsx'] }),
  run('r33', 'issue-129', 'issues opened #129', 'API keys appear in request logs', 'Investigate this issue.', 'src/logging/redact.ts masks the authorization header but not x-api-key, so API keys are written to the logs. Add x-api-key to the redacted headers and purge the old logs.', { labels: ['security'], paths: ['src/logging/redact.ts'] }),
  run('r34', 'issue-130', 'issues opened #130', 'QuickBooks import shows broken characters', 'Investigate this issue.', 'src/import/quickbooks.ts decodes the IIF file as UTF-8, but QuickBooks writes Windows-1252, so umlauts and accents turn into replacement characters. Detect the encoding and decode with iconv-lite.', { labels: ['bug', 'import'], paths: ['src/import/quickbooks.ts'] }),
  run('r35', 'issue-132', 'issues opened #132', 'Report totals differ between PDF and CSV', 'Investigate this issue.', 'src/reports/totals.ts rounds tax per line for the PDF and on the total for the CSV; the two disagree by a few cents. Use one rounding rule for both.', { labels: ['bug', 'reports'], paths: ['src/reports/totals.ts'] }),
  run('r36', 'issue-133', 'issues opened #133', 'Docker build fails building bcrypt', 'Investigate this issue.', 'gyp ERR! find Python: the Dockerfile uses node:20-slim without python3 and build-essential, so node-gyp cannot build bcrypt. Install them in the build stage or use bcryptjs.', { labels: ['build'], paths: ['Dockerfile'] }),
  run('r37', 'issue-134', 'issues opened #134', 'Invoice API returns 500 for an empty filter', 'Investigate this issue.', 'TypeError: filter.split is not a function in src/api/invoices.ts:58 when ?filter= is sent as an array by the client. Accept arrays and empty values.', { labels: ['bug', 'api'], paths: ['src/api/invoices.ts'] }),
  run('r38', 'issue-135', 'issues opened #135', 'Registration is slow under load', 'Investigate this issue.', 'src/auth/hash.ts hashes passwords with bcrypt cost 14 on the event loop; each sign-up takes 1.2 s of CPU and blocks other requests. Use cost 11 and the async API.', { labels: ['performance', 'auth'], paths: ['src/auth/hash.ts'] }),
  run('r39', 'issue-136', 'issues opened #136', 'Notifications are sent twice', 'Investigate this issue.', 'src/notifications/queue.ts acknowledges jobs after sending; when a worker restarts mid-send the job is delivered again and the email goes out twice. Record a send id and skip duplicates.', { labels: ['bug', 'email'], paths: ['src/notifications/queue.ts'] }),
  run('r40', 'issue-137', 'issues opened #137', 'Sorting invoices by date is wrong', 'Investigate this issue.', 'src/api/invoices.ts sorts by the formatted date string (DD/MM/YYYY), so the order is by day. Sort by the timestamp column.', { labels: ['bug', 'api'], paths: ['src/api/invoices.ts'] }),
  // Other work in the same repository, unrelated to the events below.
  run('d01', 'issue-140', 'issues opened #140', 'Update the README setup steps', 'Investigate this issue.', 'README.md still says Node 16; the project needs Node 20 and pnpm. Updated the setup section.', { paths: ['README.md'], labels: ['docs'] }),
  run('d02', 'issue-141', 'issues opened #141', 'Add an ESLint rule against floating promises', 'Investigate this issue.', 'Enable @typescript-eslint/no-floating-promises in .eslintrc.cjs; 14 places need an await or void.', { paths: ['.eslintrc.cjs'], labels: ['tooling'] }),
  run('d03', 'issue-142', 'issues opened #142', 'Bump TypeScript to 5.9', 'Investigate this issue.', 'TypeScript 5.9 flags two implicit any in src/api/handlers.ts; fixed them and bumped package.json.', { paths: ['package.json', 'src/api/handlers.ts'], labels: ['dependencies'] }),
  run('d04', 'issue-143', 'issues opened #143', 'Logo misaligned on the login page', 'Investigate this issue.', 'src/ui/login/LoginPage.tsx centers the logo with margin auto inside a flex row; use align-self.', { paths: ['src/ui/login/LoginPage.tsx'], labels: ['ui'] }),
  run('d05', 'issue-144', 'issues opened #144', 'Add a health check endpoint', 'Investigate this issue.', 'Added GET /healthz in src/api/health.ts returning database and queue status for the load balancer.', { paths: ['src/api/health.ts'], labels: ['ops'] }),
  run('d06', 'issue-145', 'issues opened #145', 'Typo in the footer', 'Investigate this issue.', 'src/ui/layout/Footer.tsx says "Ledgerlly"; fixed.', { paths: ['src/ui/layout/Footer.tsx'] }),
  run('d07', 'issue-146', 'issues opened #146', 'Storybook build broken after Vite upgrade', 'Investigate this issue.', '.storybook/main.ts uses the webpack builder; switch to @storybook/builder-vite.', { paths: ['.storybook/main.ts'], labels: ['tooling'] }),
  run('d08', 'issue-147', 'issues opened #147', 'Remove the old invoice editor feature flag', 'Investigate this issue.', 'The flag new_invoice_editor is on for everyone; removed the flag and the old editor from src/ui/invoices/.', { paths: ['src/flags.ts'], labels: ['cleanup'] }),
  run('d09', 'issue-148', 'issues opened #148', 'Expose Prometheus metrics', 'Investigate this issue.', 'Added prom-client with request duration histograms at /metrics in src/api/metrics.ts.', { paths: ['src/api/metrics.ts'], labels: ['ops'] }),
  run('d10', 'issue-149', 'issues opened #149', 'Tag Sentry releases with the git sha', 'Investigate this issue.', 'Set release: process.env.GIT_SHA in src/observability/sentry.ts and upload source maps in the deploy workflow.', { paths: ['src/observability/sentry.ts'], labels: ['ops'] }),
  run('d11', 'issue-150', 'issues opened #150', 'Unit tests for the money helpers', 'Investigate this issue.', 'Added tests for formatMoney and parseMoney in test/money.spec.ts, including negative amounts.', { paths: ['test/money.spec.ts', 'src/money.ts'], labels: ['tests'] }),
  run('d12', 'issue-151', 'issues opened #151', 'French date format on invoices', 'Investigate this issue.', 'src/i18n/dates.ts formats dates with en-US for every locale; use Intl.DateTimeFormat with the account locale.', { paths: ['src/i18n/dates.ts'], labels: ['i18n'] }),
  run('d13', 'issue-152', 'issues opened #152', 'Favicon missing in production', 'Investigate this issue.', 'public/favicon.ico is not copied by the build; added it to the static assets list.', { paths: ['public/favicon.ico'] }),
  run('d14', 'issue-153', 'issues opened #153', 'Terraform state lock stuck', 'Investigate this issue.', 'A cancelled apply left the DynamoDB lock; released it with terraform force-unlock and added a timeout to the workflow.', { paths: ['infra/main.tf'], labels: ['infra'] }),
  run('d15', 'issue-154', 'issues opened #154', 'Reduce the frontend bundle size', 'Investigate this issue.', 'moment with all locales is 300 KB of the bundle; replaced it with date-fns in src/ui/.', { paths: ['package.json'], labels: ['performance'] }),
  run('d16', 'issue-155', 'issues opened #155', 'Keyboard shortcut to open search', 'Investigate this issue.', 'Added Cmd+K to open the search dialog in src/ui/search/SearchDialog.tsx.', { paths: ['src/ui/search/SearchDialog.tsx'], labels: ['enhancement'] }),
  run('d17', 'issue-156', 'issues opened #156', 'Customer list CSV import', 'Investigate this issue.', 'Added a customer import from CSV in src/import/customers.ts with column mapping and validation.', { paths: ['src/import/customers.ts'], labels: ['enhancement', 'import'] }),
  run('d18', 'issue-157', 'issues opened #157', 'Seed data for local development', 'Investigate this issue.', 'scripts/seed.ts now creates 3 accounts with invoices and payments for local work.', { paths: ['scripts/seed.ts'] }),
  run('d19', 'schedule-weekly-dependency-audit', 'schedule', 'Weekly dependency audit', 'Run npm audit and report what needs upgrading.', 'npm audit: nothing above moderate this week.', { paths: ['package.json'], age: 14 }),
  run('d20', 'issue-158', 'issues opened #158', 'Add dependabot configuration', 'Investigate this issue.', 'Added .github/dependabot.yml for npm and GitHub Actions, weekly, grouped minor updates.', { paths: ['.github/dependabot.yml'], labels: ['tooling'] }),
];

const event = (id: string, kind: RelevanceEvent['kind'], title: string, text: string, relevant: string[], o: Partial<RelevanceEvent> = {}): RelevanceEvent => ({ id, kind, title, text, relevant, ...o });

export const EVENTS: RelevanceEvent[] = [
  event('e01', 'direct', 'SSO login keeps redirecting to the login page on Safari', 'Users on Safari loop back to the login page after SSO.', ['r01', 'r29']),
  event('e02', 'direct', 'Google sign-in error invalid_grant', 'Some users get Error: invalid_grant when signing in with Google.', ['r02']),
  event('e03', 'direct', 'CSV export is missing the header line', 'The exported CSV file starts with data; the header row is gone again.', ['r04', 'r28']),
  event('e04', 'direct', 'Migration fails on the new database', 'Deploy failed: ERROR: CREATE INDEX CONCURRENTLY cannot run inside a transaction block', ['r13']),
  event('e05', 'direct', 'Stripe webhook retries charge customers twice', 'We saw duplicate charges again after Stripe retried a webhook.', ['r06', 'r27']),
  event('e06', 'direct', 'upload test flaky', 'CI failed with Error: Timeout of 5000ms exceeded in test/upload.spec.ts', ['r08', 'r26']),
  event('e07', 'direct', 'Invoice creation fails under load', 'Some requests fail with: duplicate key value violates unique constraint "invoices_number_key"', ['r22']),
  event('e08', 'direct', 'Everyone at Acme gets 429 Too Many Requests', 'Acme is behind a corporate proxy and all their users are rate limited at once.', ['r11']),
  event('e09', 'direct', 'Digest crashes', "The nightly digest fails: TypeError: Cannot read properties of undefined (reading 'email')", ['r31']),
  event('e10', 'direct', 'Missing German translation keys', 'The settings page shows English text for German users.', ['r16']),
  event('e11', 'direct', 'Webhook HMAC signature check fails', 'Every incoming webhook delivery fails signature verification since the body parser change.', ['r17']),
  event('e12', 'direct', 'Dashboard load takes 5 seconds', 'The dashboard became slow to load again for big accounts.', ['r18']),
  event('e13', 'direct', 'Admins get 403 on reports', 'After the latest deploy admins see 403 Forbidden on the reports page.', ['r19']),
  event('e14', 'direct', 'Write the invoice CSV export with a stream', 'This PR changes the CSV export to stream rows.', ['r04', 'r28'], { paths: ['src/export/csv.ts'] }),
  event('e15', 'direct', 'Weekly dependency audit', 'Run npm audit and report what needs upgrading.', ['r25', 'd19'], { threadKey: 'schedule-weekly-dependency-audit' }),
  event('p01', 'paraphrased', 'Can not get into the app from iPhone with company identity provider', 'After signing in through our company identity provider, iPhone users bounce back to the sign-in screen forever.', ['r01', 'r29']),
  event('p02', 'paraphrased', 'Downloaded spreadsheet has no column names', 'The spreadsheet we download from the reports area has no column names in the first row.', ['r04', 'r28']),
  event('p03', 'paraphrased', 'Customers billed two times', 'Customers got billed two times when the payment provider resent its notification.', ['r06', 'r27']),
  event('p04', 'paraphrased', 'Monday summary arrives an hour late', 'Monday morning summary emails arrive an hour late since the clocks changed.', ['r07']),
  event('p05', 'paraphrased', 'Server RAM keeps growing', 'The server RAM keeps growing until it restarts when many people use live updates.', ['r09']),
  event('p06', 'paraphrased', 'Looking up José finds nothing', 'Looking up a customer named José finds nothing, but typing Jose works.', ['r10']),
  event('p07', 'paraphrased', 'Graphs unreadable with the night theme', 'The graphs are unreadable when the night theme is turned on.', ['r12']),
  event('p08', 'paraphrased', 'Invoice list page two repeats and skips entries', 'The second page of the invoice list repeats one entry and leaves out another.', ['r15']),
  event('p09', 'paraphrased', 'Logged out after a few minutes', 'People are logged out after a few minutes of inactivity instead of staying signed in for a day.', ['r23']),
  event('p10', 'paraphrased', 'Pay button disappears while typing on iPhone', 'On an iPhone the pay button disappears when typing the card number.', ['r24']),
  event('p11', 'paraphrased', 'New prices show up a day late', "Updated prices don't show on the product page until the next day.", ['r30']),
  event('p12', 'paraphrased', 'Blind users cannot navigate the bills list', 'Blind users using VoiceOver cannot navigate the bills table.', ['r32']),
  event('p13', 'paraphrased', 'Customer secrets in our server logs', 'Our server logs contain customer secret tokens in plain text.', ['r33']),
  event('p14', 'paraphrased', 'Garbled characters after importing from the old accounting tool', 'Files from the old accounting system show garbled characters after importing.', ['r34']),
  event('p15', 'paraphrased', 'Printed statement and downloaded spreadsheet disagree', 'The amounts in the printed statement and the downloaded spreadsheet do not agree.', ['r35']),
  event('p16', 'paraphrased', 'Same alert email received twice', 'Users receive the same alert email twice.', ['r39']),
  event('p17', 'paraphrased', 'Bills ordered by date put December before February', 'Listing bills ordered by date puts December before February.', ['r40']),
  event('p18', 'paraphrased', "Reset messages never reach the inbox", "Password reset messages never reach anyone's inbox.", ['r03']),
  event('p19', 'paraphrased', 'Signing up takes ages during a campaign', 'Signing up takes ages when many people register at once.', ['r38']),
  event('p20', 'paraphrased', 'Container image cannot compile the native crypto module', 'Building our container image fails while compiling a native password hashing module.', ['r36']),
  event('u01', 'unrelated', 'Let users pick the first day of the week', 'Add a setting to choose whether the calendar week starts on Monday or Sunday.', []),
  event('u02', 'unrelated', 'Support SCIM provisioning from Okta', 'Enterprise customers want users created and removed automatically from Okta with SCIM.', []),
  event('u03', 'unrelated', 'Keyboard navigation between tabs', 'Add keyboard shortcuts to move between the tabs of the customer page.', []),
  event('u04', 'unrelated', 'Confetti when a customer pays their first invoice', 'Show a small celebration animation after the first successful payment.', []),
  event('u05', 'unrelated', 'Translate the marketing site into Japanese', 'We want the public marketing pages in Japanese for the launch in Tokyo.', []),
  event('u06', 'unrelated', 'Export all data for a GDPR request', 'A customer asked for a copy of all personal data we hold about them under GDPR.', []),
  event('u07', 'unrelated', 'Two-factor authentication with TOTP', 'Let users protect their account with an authenticator app code.', []),
  event('u08', 'unrelated', 'Collapsible sidebar', 'Make the navigation sidebar collapsible on wide screens.', []),
  event('u09', 'unrelated', 'Invoices in several currencies', 'Customers abroad want invoices in EUR and GBP, not only USD.', []),
  event('u10', 'unrelated', 'Summarize merged pull requests', 'Every Friday, summarize the pull requests merged this week for the changelog.', [], { threadKey: 'schedule-weekly-changelog' }),
];
