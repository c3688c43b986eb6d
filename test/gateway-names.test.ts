/** The gateway's names and config, without peers: host names, collisions, variables, presets and allowlists. */
import { describe, expect, it } from 'vitest';
import { parseGatewayConfig, presetFor, tenantMayUse } from '../src/mcp/gateway/config.js';
import { HOST_NAME, hostName, nameTable } from '../src/mcp/gateway/names.js';
import { CLAMPED, relaxOutputSchema, STAND_IN } from '../src/mcp/gateway/output-schema.js';

describe('host names', () => {
  it('are {server}__{tool} when that fits the model APIs', () => {
    expect(hostName('tableau', 'get_view_as_pdf')).toBe('tableau__get_view_as_pdf');
    expect(hostName('everything', 'get-tiny-image')).toBe('everything__get-tiny-image');
  });

  it('keep a readable part and end in a short hash when too long or with other characters', () => {
    const long = hostName('server', 'a'.repeat(80));
    expect(long).toMatch(HOST_NAME);
    expect(long).toHaveLength(64);
    expect(long.startsWith('server__aaaa')).toBe(true);
    const dotted = hostName('gh', 'repos.get');
    expect(dotted).toMatch(/^gh__repos_get_[0-9a-f]{8}$/);
    // A dot and an underscore stay two names.
    expect(hostName('gh', 'repos_get')).not.toBe(dotted);
    // Stable across calls.
    expect(hostName('gh', 'repos.get')).toBe(dotted);
  });

  it('a collision names both tools and servers', () => {
    expect(() =>
      nameTable(
        [
          { server: 'a', name: '_x' },
          { server: 'a_', name: 'x' },
        ],
        'tool',
      ),
    ).toThrow('The tools "_x" of server "a" and "x" of server "a_" would both be called a___x.');
  });
});

describe('gateway config', () => {
  // biome-ignore lint/suspicious/noTemplateCurlyInString: the gateway config's own ${VAR} syntax
  it('fills ${VAR} and ${VAR:-default} from the environment, and skips disabled servers', () => {
    const config = parseGatewayConfig(
      {
        mcpServers: {
          gh: {
            command: 'npx',
            args: ['-y', 'server-github'],
            // biome-ignore lint/suspicious/noTemplateCurlyInString: the gateway config's own ${VAR} syntax
            env: { TOKEN: '${GH_TOKEN}', LEVEL: '${LEVEL:-info}' },
            autoApprove: [],
          },
          // biome-ignore lint/suspicious/noTemplateCurlyInString: the gateway config's own ${VAR} syntax
          remote: { url: 'https://h.example/mcp', headers: { Authorization: 'Bearer ${REMOTE}' } },
          off: { command: 'x', disabled: true },
        },
      },
      { GH_TOKEN: 'ghp_1', REMOTE: 'r' },
    );
    expect([...config.servers.keys()]).toEqual(['gh', 'remote']);
    expect(config.servers.get('gh')).toMatchObject({ env: { TOKEN: 'ghp_1', LEVEL: 'info' } });
    expect(config.servers.get('remote')).toMatchObject({ headers: { Authorization: 'Bearer r' } });
  });

  it.each([
    [[], /must be a JSON object/],
    [{ mcpServer: {} }, /unknown key "mcpServer"\. Did you mean "mcpServers"\?/],
    [{ mcpServers: [] }, /at mcpServers: it must be an object/],
    [{ mcpServers: { a: { url: 'ftp://h/x' } } }, /server "a".*url/],
    [
      { mcpServers: { a: { command: 'x', artifacts: { tenant: ['t'] } } } },
      /unknown key "tenant"\. Did you mean "tenants"\?/,
    ],
    [
      { mcpServers: { a: { command: 'x', artifacts: { guardrail: { maxObservationChars: 1 } } } } },
      /artifacts\.guardrail config at maxObservationChars/,
    ],
    [{ mcpServers: { a__b: { command: 'x' } } }, /server names are/],
  ])('refuses %j', (input, message) => {
    expect(() => parseGatewayConfig(input, {})).toThrow(message);
  });

  it('picks a preset by the server name at initialize, then the config key', () => {
    expect(presetFor('bi', 'tableau-mcp')).toBe('tableau');
    expect(presetFor('github', undefined)).toBe('github');
    expect(presetFor('browser', 'Playwright')).toBe('playwright');
    expect(presetFor('files', 'secure-filesystem-server')).toBeUndefined();
  });

  it('lets no tenant use a server unless the config lists it ("*": every tenant)', () => {
    const { servers } = parseGatewayConfig({
      mcpServers: {
        none: { command: 'x' },
        acme: { command: 'x', artifacts: { tenants: ['acme'] } },
        all: { command: 'x', artifacts: { tenants: '*' } },
      },
    });
    const may = (name: string, tenant?: string) => tenantMayUse(servers.get(name)!, tenant);
    expect([may('none', 'acme'), may('acme', 'acme'), may('acme', 'globex'), may('all', 'globex')]).toEqual([
      false,
      true,
      false,
      true,
    ]);
    // The stdio gateway has one user and no tenant: every server.
    expect(may('none')).toBe(true);
  });
});

describe('relaxed output schemas', () => {
  it('accept the stand-in wherever a value may be replaced, and the clamped shape at the root', () => {
    const schema = {
      type: 'object',
      properties: { image: { type: 'string' }, rows: { type: 'array', items: { type: 'object' } } },
      required: ['image'],
      $defs: { x: { type: 'object', properties: { y: { type: 'string' } } } },
    };
    const relaxed = relaxOutputSchema(schema);
    expect(relaxed).toEqual({
      type: 'object',
      anyOf: [
        {
          type: 'object',
          properties: {
            image: { anyOf: [{ type: 'string' }, STAND_IN] },
            rows: { anyOf: [{ type: 'array', items: { anyOf: [{ type: 'object' }, STAND_IN] } }, STAND_IN] },
          },
          required: ['image'],
        },
        CLAMPED,
      ],
      $defs: { x: { type: 'object', properties: { y: { anyOf: [{ type: 'string' }, STAND_IN] } } } },
    });
  });
});
