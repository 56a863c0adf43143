// The main server's routes: marketplace deals, webhooks, escrow notifications, cabinet, administration. Its OpenAPI document is /api/openapi.json.
import type Koa from 'koa';
import { Api } from './http/api.ts';
import { createApp } from './http/app.ts';
import { healthChecks, type Services } from './services.ts';
import { marketplaceRoutes } from './marketplaces/routes.ts';
import { adminMarketplaceRoutes } from './marketplaces/admin-routes.ts';
import { marketplaceConsolePages } from './marketplaces/console-pages.ts';
import { mailRoutes } from './mail/routes.ts';
import { dataKeyAdminRoutes } from './data-api/admin-routes.ts';
import { dataKeyCabinetRoutes } from './data-api/cabinet-routes.ts';
import { dataKeyCabinetPages } from './data-api/cabinet-pages.ts';
import { webhookRoutes } from './webhooks/routes.ts';
import { escrowNotificationRoutes } from './escrow/notifications.ts';
import { dealRoutes } from './deals/routes.ts';
import { ledgerRoutes } from './money/routes.ts';
import { reconciliationAdminRoutes } from './money/admin-routes.ts';
import { moneyConsolePages } from './money/console-pages.ts';
import { adminDealRoutes } from './deals/admin-routes.ts';
import { dealConsolePages } from './deals/console-pages.ts';
import { cabinetRoutes } from './cabinet/routes.ts';
import { cabinetPages } from './cabinet/pages.ts';
import { accountRoutes } from './accounts/routes.ts';
import { accountPages } from './accounts/pages.ts';
import { ssoRoutes } from './sso/routes.ts';
import { widget } from './widget/index.ts';
import { adminRoutes } from './admin/routes.ts';
import { consolePages } from './admin/console-pages.ts';
import { ssoConsolePages } from './sso/console-pages.ts';
import { dataAccountConsolePages } from './data-api/console-pages.ts';

export function createMainApp(services: Services): Koa {
  const api = new Api({
    title: 'svc API',
    version: '1.0.0',
    description:
      'Marketplace deals with escrow, the widget, single sign-on, the buyer cabinet and administration. ' +
      'Errors are RFC 9457 problem details with a stable `code`.',
    securitySchemes: {
      marketplaceKey: { type: 'apiKey', in: 'header', name: 'X-Svc-Key', description: 'The secret mk_ key' },
      adminToken: { type: 'http', scheme: 'bearer', description: 'An administrator token' },
      widgetToken: {
        type: 'apiKey',
        in: 'header',
        name: 'X-Svc-Widget-Token',
        description: 'A widget token from POST /api/mkt/widget/deals (or the wt query)',
      },
      cabinetToken: { type: 'http', scheme: 'bearer', description: 'A cabinet token (ct_…) from POST /cabinet/login' },
      clientSecretBasic: {
        type: 'http',
        scheme: 'basic',
        description: 'SSO client_id and client_secret (or both in the form)',
      },
      ssoAccessToken: {
        type: 'http',
        scheme: 'bearer',
        description: 'An access token from the OpenID Connect token endpoint',
      },
    },
  });
  marketplaceRoutes(api, services);
  adminMarketplaceRoutes(api, services);
  marketplaceConsolePages(api, services);
  dealRoutes(api, services);
  ledgerRoutes(api, services);
  reconciliationAdminRoutes(api, services);
  moneyConsolePages(api, services);
  widget(api, services);
  cabinetRoutes(api, services);
  cabinetPages(api, services);
  accountRoutes(api, services);
  accountPages(api, services);
  ssoRoutes(api, services);
  adminDealRoutes(api, services);
  dealConsolePages(api, services);
  adminRoutes(api, services);
  consolePages(api, services);
  ssoConsolePages(api, services);
  dataAccountConsolePages(api, services);
  mailRoutes(api, services);
  dataKeyAdminRoutes(api, services);
  dataKeyCabinetRoutes(api, services);
  dataKeyCabinetPages(api, services);
  webhookRoutes(api, services);
  escrowNotificationRoutes(api, services);
  return createApp({
    name: 'main',
    baseUrl: services.config.BASE_URL,
    logger: services.logger,
    api,
    openapiPath: '/api/openapi.json',
    health: healthChecks(services),
    proxyHops: services.config.TRUST_PROXY,
  });
}
