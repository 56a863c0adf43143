// RFC 9728 protected resource metadata, where the 401 challenge's resource_metadata points. Beside svc_mcp_ keys
// (issued by administrators and in the cabinet), the data server takes access tokens of this service's own issuer
// (BASE_URL) whose audience is the data server, so that issuer is the one authorization server listed.
import { z } from 'zod';
import type { Api } from '../http/api.ts';
import type { Services } from '../services.ts';
import { PROTECTED_RESOURCE_METADATA_PATH } from './auth.ts';

const MetadataSchema = z.object({
  resource: z.string(),
  resource_name: z.string(),
  bearer_methods_supported: z.array(z.string()),
  resource_documentation: z.string(),
  authorization_servers: z.array(z.string()).describe('This service’s issuer (BASE_URL), whose tokens are accepted'),
  scopes_supported: z.array(z.string()),
});

export function resourceMetadataRoutes(api: Api, services: Services): void {
  const document = (resource: 'mcp' | 'v1') => ({
    resource: `${services.config.MCP_URL}${resource === 'mcp' ? '/mcp/' : '/v1'}`,
    resource_name: resource === 'mcp' ? 'svc tender data (MCP)' : 'svc tender data API',
    bearer_methods_supported: ['header'],
    resource_documentation: `${services.config.MCP_URL}/docs`,
    authorization_servers: [services.config.BASE_URL],
    scopes_supported: ['openid', 'profile', 'email', 'offline_access'],
  });
  api.route({
    method: 'get',
    path: PROTECTED_RESOURCE_METADATA_PATH,
    operationId: 'protectedResourceMetadata',
    summary: 'Protected resource metadata (RFC 9728) of the MCP endpoint',
    tags: ['Discovery'],
    responses: { 200: { description: 'The metadata', schema: MetadataSchema } },
    handler: (ctx) => {
      ctx.body = document('mcp');
    },
  });
  api.route({
    method: 'get',
    path: `${PROTECTED_RESOURCE_METADATA_PATH}/{resource_path}`,
    operationId: 'protectedResourceMetadataOf',
    summary: 'Protected resource metadata (RFC 9728) of /mcp or /v1',
    tags: ['Discovery'],
    params: z.object({ resource_path: z.enum(['mcp', 'v1']).describe('The path of the resource: mcp or v1') }),
    responses: { 200: { description: 'The metadata', schema: MetadataSchema } },
    handler: (ctx, { params }) => {
      ctx.body = document(params.resource_path);
    },
  });
}
