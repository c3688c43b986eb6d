import type { BlockSpec, ToolSpec, TransformConfig } from './config.js';

/**
 * Presets for the per-tool fields layer, for MCP servers whose tools return binary. Each preset
 * names the source its shape was taken from (repository, file, tool); the shapes were checked
 * against those sources in November 2026. test/mcp-presets.test.ts holds a fixture in each shape.
 *
 * A preset only names and summarises what the other layers would store anyway, points the
 * per-tool fields layer at a base64 field that has no magic bytes to find it by (XML, text), or
 * says that a tool's images are for the model to see (`images.inline`). Shapes
 * that carry no bytes (a resource_link, a path on the server's disk, a URL) pass through: resource
 * links stay lazy.
 * Presets match on the tool name alone, so a server that reuses a name (`get_file_contents` on a
 * GitLab server) gets the same specs; config `tools` entries win over them.
 */
export type PresetName = 'tableau' | 'github' | 'playwright' | 'mapbox';

const tableauViewImage = (what: string, file: string): BlockSpec => ({
  contentType: `${what} image`,
  filename: `${file}.{ext}`,
  summary: `Rendered the Tableau ${what} ({type}, {size_human}). Artifact {artifact_id}`,
});

export const PRESETS: Record<PresetName, Record<string, ToolSpec[]>> = {
  /**
   * Tableau.
   *
   * - `download_workbook`, `get_view_as_pdf`: the incident's shapes, from the RFC in the seeds
   *   (rfc-mcp-binary-content-v0.3.md, Appendix B). One text block holding JSON:
   *   `{"content":"JVBERi0…","name":"Sales Dashboard","format":"pdf"}` and
   *   `{"pdf_data":"JVBERi0…","view_name":"Revenue by Region","generated_at":"…"}`. No public
   *   Tableau server was found that returns them (the official one names its tools with hyphens and
   *   has no PDF export), so they stand for the third-party server of the incident.
   * - `get-view-image`, `get-custom-view-image`: tableau/tableau-mcp,
   *   src/tools/web/convertViewImageToToolResult.ts via src/tools/web/views/imageToolResult.ts. A PNG
   *   comes as the only block, `{ type: "image", mimeType: "image/png", data }`; format "SVG" adds a
   *   text block with the markup before an `image/svg+xml` image block. With S3 offload on, the
   *   result is a `resource_link` to a presigned URL (with `_meta.slack`) and carries no bytes.
   *   `get_view_image` gets the same block spec: no source shows that name with another shape.
   * - `download-workbook`: tableau/tableau-mcp, src/tools/web/workbooks/downloadWorkbook.ts and
   *   workbookToolResult.ts never inline bytes: a `resource_link` (S3) or a text block with
   *   `{"path","filename","mimeType"}` of a file on the server's disk; both pass through. The fork
   *   rizky-battlehooks/tableau-mcp (src/tools/workbooks/downloadWorkbook.ts,
   *   src/tools/convertBinaryToBase64TextResult.ts) returns the .twb XML as
   *   `{"filename":"X.twb","mimeType":"application/xml","encoding":"base64","data":"…"}`: XML has no
   *   magic bytes for the heuristic to find, hence the field spec.
   */
  tableau: {
    download_workbook: [
      {
        fields: [
          {
            path: 'content',
            filename: '{name}.{format}',
            summary: "Downloaded workbook '{name}' as {type} ({size_human}). Artifact {artifact_id}",
          },
        ],
      },
    ],
    get_view_as_pdf: [
      {
        fields: [
          {
            path: 'pdf_data',
            mimeType: 'application/pdf',
            contentType: 'PDF',
            filename: '{view_name}.pdf',
            summary: "Exported view '{view_name}' as PDF ({size_human}). Artifact {artifact_id}",
          },
        ],
      },
    ],
    get_view_image: [{ blocks: tableauViewImage('view', 'view') }],
    'get-view-image': [{ blocks: tableauViewImage('view', 'view') }],
    'get-custom-view-image': [{ blocks: tableauViewImage('custom view', 'custom-view') }],
    'download-workbook': [
      {
        fields: [
          {
            path: 'data',
            when: { encoding: 'base64' },
            mimeType: 'application/xml',
            contentType: 'workbook',
            filename: '{filename}',
            summary: "Downloaded workbook '{filename}' ({size_human}). Artifact {artifact_id}",
          },
        ],
      },
    ],
  },
  /**
   * GitHub get_file_contents.
   *
   * - github/github-mcp-server, pkg/github/repositories.go (GetFileContents), URIs from
   *   pkg/github/repository_resource.go, blocks from pkg/utils/result.go: a text block
   *   ("successfully downloaded binary file (SHA: …)") then an embedded resource
   *   `{ uri: "repo://owner/repo/sha/{sha}/contents/{path}", mimeType, blob }`. The type is sniffed
   *   by the server; text files come as `resource.text` and stay inline while small. Files of 1 MiB
   *   or more come as a `resource_link` (name, title, size, no type): kept lazy by the resource
   *   links layer. With embedded resources turned off, a binary file is an image block whatever its
   *   type, with `_meta.uri`: the default summary applies, as there is no name to fill the template.
   * - Releases before June 2025 (the same file then; issue #372 quotes it) returned go-github's
   *   RepositoryContent as JSON text: `content` is base64 wrapped with "\n" every 60 characters,
   *   `encoding: "base64"`, beside name, path, sha, size and the URLs. The field spec also takes
   *   text files, which have no magic bytes.
   * - @modelcontextprotocol/server-github (modelcontextprotocol/servers, src/github/operations/files.ts)
   *   sends the same JSON with `content` already decoded to UTF-8 though `encoding` still says
   *   "base64". Such text is not base64 and stays as it is; its binary files arrive mangled and
   *   cannot be recovered.
   */
  github: {
    get_file_contents: [
      {
        fields: [
          {
            path: 'content',
            when: { encoding: 'base64' },
            filename: '{name}',
            summary: "Downloaded '{path}' ({size_human}). Artifact {artifact_id}",
          },
        ],
        blocks: {
          filename: '{name}',
          summary: "Downloaded '{name}' ({type}, {size_human}) from {uri}. Artifact {artifact_id}",
        },
      },
    ],
  },
  /**
   * Playwright MCP browser_take_screenshot: microsoft/playwright,
   * packages/playwright/src/mcp/browser/tools/screenshot.ts and response.ts (earlier in
   * microsoft/playwright-mcp, src/tools/screenshot.ts). A markdown text block (the result, with the
   * saved file's name, and the code it ran), then `{ type: "image", mimeType: "image/png" | "image/jpeg", data }`.
   * The inline image is scaled down to fit a message; the full-size file stays in the server's
   * output directory. Some versions send no image for `fullPage`, and `--image-responses=omit`
   * sends none; those results are text only. The screenshot is for the model to look at: it stays
   * inline (within the transformer's `images` limits), and is stored and linked as well.
   */
  playwright: {
    browser_take_screenshot: [
      {
        images: { inline: true },
        blocks: {
          contentType: 'screenshot',
          filename: 'screenshot.{ext}',
          summary: 'Took a screenshot ({type}, {size_human}). Artifact {artifact_id}',
        },
      },
    ],
  },
  /**
   * Mapbox static_map_image_tool: mapbox/mcp-server, src/tools/static-map-image-tool/StaticMapImageTool.ts.
   * A text block with the Static Images API URL (no token), then
   * `{ type: "image", mimeType: "image/png" | "image/jpeg" (satellite styles), data }`, and
   * `_meta.viewUUID`. An image over 700 KB is replaced by a text block naming a `mapbox://` resource
   * to read. The first releases sent the image block alone; later ones added an MCP-UI embedded
   * resource `ui://mapbox/static-map/…` whose text is the iframe URL: not binary, it stays inline.
   */
  mapbox: {
    static_map_image_tool: [
      {
        blocks: {
          contentType: 'map image',
          filename: 'static-map.{ext}',
          summary: 'Rendered a static map ({type}, {size_human}). Artifact {artifact_id}',
        },
      },
    ],
  },
};

/** The preset specs that apply to a tool under the configured preset selection. */
export function presetSpecs(toolName: string, selection: TransformConfig['presets']): ToolSpec[] {
  if (selection === 'none') return [];
  const names = selection === 'all' ? (Object.keys(PRESETS) as PresetName[]) : selection;
  return names.flatMap((name) => PRESETS[name][toolName] ?? []);
}
