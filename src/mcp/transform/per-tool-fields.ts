/**
 * The per-tool fields layer: base64 at the field paths a tool's spec names (config.tools and the
 * shipped presets), stored with the spec's type, filename and summary template.
 */
import type { ToolSpec, TransformConfig } from '../config.js';
import { base64Candidate } from '../detect.js';
import { BinaryValue, type WorkValue } from '../json.js';
import { isPlainObject, parseFieldPath, resolveFieldPath } from '../paths.js';
import { presetSpecs } from '../presets.js';
import { siblingVars } from '../summary.js';
import { nameFromSiblings, shortPath } from './names.js';
import { placeholder, storeBase64, storeBytes, type Outcome, type PayloadContext } from './payloads.js';
import type { TransformRun } from './run.js';

/** The specs for a tool: its own from config.tools, then the presets'; server-bound ones only on their server. */
export function toolSpecsFor(toolName: string, serverName: string | undefined, config: TransformConfig): ToolSpec[] {
  const own = config.tools[toolName];
  const specs = [...(own ? (Array.isArray(own) ? own : [own]) : []), ...presetSpecs(toolName, config.presets)];
  return specs.filter((s) => !s.server || !serverName || serverName.toLowerCase().includes(s.server.toLowerCase()));
}

/** Replaces each named field that holds base64 (or raw bytes) by its placeholder; later layers see the rest. */
export async function applyFieldSpecs(run: TransformRun, holder: Record<string, WorkValue>): Promise<void> {
  for (const spec of run.specs) {
    for (const field of spec.fields ?? []) {
      for (const site of resolveFieldPath(holder.root!, parseFieldPath(field.path))) {
        if (
          field.when &&
          !Object.entries(field.when).every(([k, v]) => isPlainObject(site.parent) && site.parent[k] === v)
        )
          continue;
        const vars = siblingVars(site.parent);
        const ctx: PayloadContext = {
          layer: 'fields',
          where: shortPath(site.path),
          spec: field,
          vars,
          ...nameFromSiblings(vars),
        };
        let outcome: Outcome | undefined;
        if (site.value instanceof BinaryValue) outcome = await storeBytes(run, site.value.bytes, ctx);
        else if (typeof site.value === 'string') {
          const candidate = base64Candidate(site.value, 1);
          if (!candidate) continue; // not base64 here: later layers see it as it is
          if (candidate.declaredMime) ctx.declaredMime = candidate.declaredMime;
          outcome = await storeBase64(run, candidate.body, ctx, site.value);
        }
        if (outcome) run.replace(site.parent, site.key, placeholder(outcome));
      }
    }
  }
}
