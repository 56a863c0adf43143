// The embeddable widget on the main server: its API, its pages and its script.
import type { Api } from '../http/api.ts';
import type { Services } from '../services.ts';
import { widgetRoutes } from './routes.ts';
import { widgetPages } from './pages.ts';
import { widgetScriptRoute } from './script.ts';

export function widget(api: Api, services: Services): void {
  widgetRoutes(api, services);
  widgetPages(api, services);
  widgetScriptRoute(api);
}
