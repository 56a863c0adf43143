// Prometheus metrics of one server: process defaults plus request counts and latencies by route template.
import { Counter, Histogram, Registry, collectDefaultMetrics } from 'prom-client';

export class HttpMetrics {
  readonly registry = new Registry();
  private readonly duration: Histogram<'method' | 'route' | 'status'>;
  private readonly requests: Counter<'method' | 'route' | 'status'>;

  constructor(server: string) {
    this.registry.setDefaultLabels({ server });
    collectDefaultMetrics({ register: this.registry });
    this.duration = new Histogram({
      name: 'http_request_duration_seconds',
      help: 'HTTP request latency by route template',
      labelNames: ['method', 'route', 'status'],
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
      registers: [this.registry],
    });
    this.requests = new Counter({
      name: 'http_requests_total',
      help: 'HTTP requests by route template and status',
      labelNames: ['method', 'route', 'status'],
      registers: [this.registry],
    });
  }

  observe(method: string, route: string, status: number, seconds: number): void {
    const labels = { method, route, status: String(status) };
    this.duration.observe(labels, seconds);
    this.requests.inc(labels);
  }
}
