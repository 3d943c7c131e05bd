/**
 * Reads what an error response says, whatever its shape: the spec's
 * `{errorCode, errorMessage, diagnosticCode}`, the import paths'
 * `{message}` and `{status}`, the mapping paths' `{error: {code, message,
 * diagnosticCode}}`, an XML error object (the spec allows application/xml),
 * or plain text. Never fails: an unreadable body yields a trimmed excerpt.
 */
import { redact } from './redaction.js';

export interface ErrorBodyFacts {
  errorCode?: string;
  serviceMessage?: string;
  diagnosticCode?: string;
}

const EXCERPT_CHARS = 300;

export function excerpt(text: string): string | undefined {
  const flat = text.replace(/\s+/g, ' ').trim();
  if (flat === '') return undefined;
  return flat.length > EXCERPT_CHARS ? `${flat.slice(0, EXCERPT_CHARS)}...` : flat;
}

function str(v: unknown): string | undefined {
  if (typeof v === 'string') return excerpt(v);
  if (typeof v === 'number') return String(v);
  return undefined;
}

function fromJson(body: Record<string, unknown>): ErrorBodyFacts {
  const nested = body.error;
  if (typeof nested === 'object' && nested !== null && !Array.isArray(nested)) {
    const e = nested as Record<string, unknown>;
    return { errorCode: str(e.code), serviceMessage: str(e.message), diagnosticCode: str(e.diagnosticCode) };
  }
  return {
    errorCode: str(body.errorCode),
    serviceMessage: str(body.errorMessage) ?? str(body.message) ?? str(body.status) ?? str(nested),
    diagnosticCode: str(body.diagnosticCode),
  };
}

function xmlTag(text: string, tag: string): string | undefined {
  const m = new RegExp(`<(?:[\\w-]+:)?${tag}\\b[^>]*>([\\s\\S]*?)</(?:[\\w-]+:)?${tag}>`, 'i').exec(text);
  return m?.[1] === undefined ? undefined : excerpt(m[1].replace(/<!\[CDATA\[([\s\S]*?)\]\]>/g, '$1'));
}

function fromXml(text: string): ErrorBodyFacts {
  const facts: ErrorBodyFacts = {
    errorCode: xmlTag(text, 'errorCode') ?? xmlTag(text, 'code'),
    serviceMessage: xmlTag(text, 'errorMessage') ?? xmlTag(text, 'message'),
    diagnosticCode: xmlTag(text, 'diagnosticCode'),
  };
  if (!facts.serviceMessage && !facts.errorCode) {
    facts.serviceMessage = excerpt(text.replace(/<\?xml[^>]*>/i, '').replace(/<[^>]+>/g, ' '));
  }
  return facts;
}

function parseErrorBody(text: string, contentType = ''): ErrorBodyFacts {
  const trimmed = text.trim();
  if (trimmed === '') return {};
  if (trimmed.startsWith('{')) {
    try {
      const body: unknown = JSON.parse(trimmed);
      if (typeof body === 'object' && body !== null && !Array.isArray(body)) {
        const facts = fromJson(body as Record<string, unknown>);
        if (facts.errorCode || facts.serviceMessage || facts.diagnosticCode) return facts;
      }
    } catch {
      // Not JSON after all: fall through to the excerpt.
    }
  }
  if (/xml/i.test(contentType) || trimmed.startsWith('<')) return fromXml(trimmed);
  return { serviceMessage: excerpt(trimmed) };
}

/**
 * parseErrorBody without the secrets: removed from the raw text (where they
 * may be spelled escaped) and again from what parsing decoded.
 */
export function parseRedactedErrorBody(text: string, contentType: string, secrets: readonly string[]): ErrorBodyFacts {
  const facts = parseErrorBody(redact(text, secrets), contentType);
  const clean = (v: string | undefined) => (v === undefined ? undefined : redact(v, secrets));
  return {
    errorCode: clean(facts.errorCode),
    serviceMessage: clean(facts.serviceMessage),
    diagnosticCode: clean(facts.diagnosticCode),
  };
}
