import { createRequire } from 'node:module';
import http from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * An OTLP/HTTP trace receiver of the tests' own (no collector runs here): it takes what the gateway
 * exports to `/v1/traces`, in either encoding, and keeps every span. JSON is read as JSON (OTLP/JSON
 * writes ids in hex); protobuf is decoded with the message types OpenTelemetry's JavaScript project
 * generated from the OTLP protos (the `otlp-protos` devDependency: @opentelemetry/otlp-transformer's
 * last release that ships them).
 */

export interface ReceivedSpan {
  traceId: string;
  spanId: string;
  parentSpanId: string;
  name: string;
  /** OTLP's SpanKind: 1 internal, 2 server, 3 client, 4 producer, 5 consumer. */
  kind: number;
  attributes: Record<string, unknown>;
  status: { code: number; message?: string };
  links: { traceId: string; spanId: string }[];
  scope: string;
  resource: Record<string, unknown>;
  /** How the span arrived. */
  encoding: 'json' | 'protobuf';
}

export interface OtlpReceiver {
  /** http://127.0.0.1:port, for OTEL_EXPORTER_OTLP_ENDPOINT. */
  endpoint: string;
  readonly spans: ReceivedSpan[];
  /** Content types of the exports received. */
  readonly contentTypes: string[];
  /** The headers of every export (OTEL_EXPORTER_OTLP_HEADERS arrive there). */
  readonly headers: http.IncomingHttpHeaders[];
  /** Waits until `found` finds something among the spans received, or fails after `timeoutMs`. */
  waitFor<T>(found: (spans: ReceivedSpan[]) => T | undefined | false, timeoutMs?: number): Promise<T>;
  close(): Promise<void>;
}

type AnyValue = Record<string, unknown>;

const require = createRequire(import.meta.url);
interface ProtoRoot {
  opentelemetry: {
    proto: {
      collector: { trace: { v1: { ExportTraceServiceRequest: { decode(bytes: Uint8Array): unknown; toObject(message: unknown, options: object): unknown } } } };
    };
  };
}
let protos: ProtoRoot | undefined;
const exportRequest = () => {
  protos ??= require('otlp-protos/build/src/generated/root.js') as ProtoRoot;
  return protos.opentelemetry.proto.collector.trace.v1.ExportTraceServiceRequest;
};

/** An OTLP AnyValue as the plain value it holds. */
function plain(value: AnyValue | undefined): unknown {
  if (!value) return undefined;
  if ('stringValue' in value) return value.stringValue;
  if ('intValue' in value) return Number(value.intValue);
  if ('doubleValue' in value) return value.doubleValue;
  if ('boolValue' in value) return value.boolValue;
  if ('arrayValue' in value) return ((value.arrayValue as { values?: AnyValue[] }).values ?? []).map(plain);
  if ('kvlistValue' in value) return attributes((value.kvlistValue as { values?: KeyValue[] }).values);
  if ('bytesValue' in value) return value.bytesValue;
  return undefined;
}

type KeyValue = { key: string; value?: AnyValue };
const attributes = (list: KeyValue[] | undefined) => Object.fromEntries((list ?? []).map(({ key, value }) => [key, plain(value)]));

type Id = string | Uint8Array | undefined;
const hex = (id: Id) => (id === undefined ? '' : typeof id === 'string' ? id : Buffer.from(id).toString('hex'));

interface OtlpSpan {
  traceId: Id;
  spanId: Id;
  parentSpanId?: Id;
  name: string;
  kind?: number;
  attributes?: KeyValue[];
  status?: { code?: number; message?: string };
  links?: { traceId: Id; spanId: Id }[];
}
interface OtlpRequest {
  resourceSpans?: { resource?: { attributes?: KeyValue[] }; scopeSpans?: { scope?: { name?: string }; spans?: OtlpSpan[] }[] }[];
}

function spansOf(request: OtlpRequest, encoding: ReceivedSpan['encoding']): ReceivedSpan[] {
  const spans: ReceivedSpan[] = [];
  for (const resourceSpans of request.resourceSpans ?? []) {
    const resource = attributes(resourceSpans.resource?.attributes);
    for (const scopeSpans of resourceSpans.scopeSpans ?? []) {
      for (const span of scopeSpans.spans ?? []) {
        spans.push({
          traceId: hex(span.traceId),
          spanId: hex(span.spanId),
          parentSpanId: hex(span.parentSpanId),
          name: span.name,
          kind: span.kind ?? 0,
          attributes: attributes(span.attributes),
          status: { code: span.status?.code ?? 0, ...(span.status?.message ? { message: span.status.message } : {}) },
          links: (span.links ?? []).map((link) => ({ traceId: hex(link.traceId), spanId: hex(link.spanId) })),
          scope: scopeSpans.scope?.name ?? '',
          resource,
          encoding,
        });
      }
    }
  }
  return spans;
}

export async function startOtlpReceiver(): Promise<OtlpReceiver> {
  const spans: ReceivedSpan[] = [];
  const contentTypes: string[] = [];
  const headers: http.IncomingHttpHeaders[] = [];
  const server = http.createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const body = Buffer.concat(chunks);
      const contentType = request.headers['content-type'] ?? '';
      contentTypes.push(contentType);
      headers.push(request.headers);
      try {
        if (request.url !== '/v1/traces') throw new Error(`nothing is received at ${request.url}`);
        if (contentType.startsWith('application/json')) {
          spans.push(...spansOf(JSON.parse(body.toString('utf8')) as OtlpRequest, 'json'));
          response.writeHead(200, { 'content-type': 'application/json' }).end('{}');
        } else if (contentType.startsWith('application/x-protobuf')) {
          const type = exportRequest();
          const decoded = type.toObject(type.decode(body), { longs: String, defaults: false }) as OtlpRequest;
          spans.push(...spansOf(decoded, 'protobuf'));
          // An empty ExportTraceServiceResponse.
          response.writeHead(200, { 'content-type': 'application/x-protobuf' }).end();
        } else {
          throw new Error(`unknown content type ${contentType}`);
        }
      } catch (error) {
        response.writeHead(400, { 'content-type': 'text/plain' }).end(String(error));
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    endpoint: `http://127.0.0.1:${port}`,
    spans,
    contentTypes,
    headers,
    async waitFor(found, timeoutMs = 15_000) {
      const until = Date.now() + timeoutMs;
      for (;;) {
        const result = found(spans);
        if (result) return result;
        if (Date.now() > until) throw new Error(`not received within ${timeoutMs} ms; spans so far:\n${spans.map((span) => `${span.traceId} ${span.name}`).join('\n')}`);
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
    },
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

/** The spans of one trace as a tree: each span's children by name, for readable failures. */
export function childrenOf(spans: ReceivedSpan[], parent: ReceivedSpan): ReceivedSpan[] {
  return spans.filter((span) => span.traceId === parent.traceId && span.parentSpanId === parent.spanId);
}

/** Every span beneath `ancestor` in its trace. */
export function descendantsOf(spans: ReceivedSpan[], ancestor: ReceivedSpan): ReceivedSpan[] {
  const found: ReceivedSpan[] = [];
  const walk = (span: ReceivedSpan) => {
    for (const child of childrenOf(spans, span)) {
      found.push(child);
      walk(child);
    }
  };
  walk(ancestor);
  return found;
}
