/**
 * Receives a data PUT's body as a stream: it counts bytes, hashes them with
 * sha256 as they pass and keeps only the header row, so a multi-GB upload
 * costs the simulator a few KiB of memory.
 */
import { createHash } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import { HeaderCapture } from './csv-header.js';

type UploadOutcome =
  | { kind: 'complete'; bytes: number; sha256: string; header: string[] | undefined }
  /** More than maxUploadBytes declared or sent; the rest was read and discarded. */
  | { kind: 'tooLarge'; bytes: number }
  /** The body ended before Content-Length bytes arrived (the client went away). */
  | { kind: 'short'; bytes: number; expected: number | undefined }
  /** A resetUploadAfter fault destroyed the socket. */
  | { kind: 'reset'; bytes: number }
  /** A stallUploadAfter fault stopped reading; the request stays open until the simulator closes. */
  | { kind: 'stalled'; bytes: number }
  /** A refuseUploadMidBody fault stopped reading: the route answers its status and resets the connection. */
  | { kind: 'refused'; bytes: number; status: number }
  /** An answerUploadEarly fault stopped reading: what arrived so far is taken as the file. */
  | { kind: 'early'; bytes: number; sha256: string; header: string[] | undefined };

interface UploadFaults {
  resetAfterBytes?: number;
  stallAfterBytes?: number;
  answerEarlyAfterBytes?: number;
  refuseMidBody?: { afterBytes: number; status: number };
  /** Stop reading after `afterBytes` until `until` settles, then read on. */
  hold?: { afterBytes: number; until: Promise<void> };
  /** Read the body no faster than this (a slow link or a busy service), so an upload lasts. */
  throttleBytesPerSec?: number;
}

export function receiveUpload(req: IncomingMessage, maxBytes: number, faults: UploadFaults): Promise<UploadOutcome> {
  const declared = req.headers['content-length'] === undefined ? undefined : Number(req.headers['content-length']);
  const hash = createHash('sha256');
  const capture = new HeaderCapture();
  let bytes = 0;
  let tooLarge = declared !== undefined && declared > maxBytes;
  let hold = faults.hold;

  return new Promise((resolve) => {
    let settled = false;
    const finish = (outcome: UploadOutcome) => {
      if (settled) return;
      settled = true;
      resolve(outcome);
    };
    const checkFaults = (): boolean => {
      if (faults.resetAfterBytes !== undefined && bytes >= faults.resetAfterBytes) {
        req.socket.destroy();
        finish({ kind: 'reset', bytes });
        return true;
      }
      if (faults.stallAfterBytes !== undefined && bytes >= faults.stallAfterBytes) {
        req.pause();
        finish({ kind: 'stalled', bytes });
        return true;
      }
      if (hold && bytes >= hold.afterBytes) {
        const { until } = hold;
        hold = undefined;
        req.pause();
        void until.then(() => req.resume());
        return true;
      }
      if (faults.refuseMidBody && bytes >= faults.refuseMidBody.afterBytes) {
        // Read on: the client goes on writing at full speed until the reset.
        finish({ kind: 'refused', bytes, status: faults.refuseMidBody.status });
        return true;
      }
      if (faults.answerEarlyAfterBytes !== undefined && bytes >= faults.answerEarlyAfterBytes) {
        req.pause();
        finish({ kind: 'early', bytes, sha256: hash.digest('hex'), header: capture.header() });
        return true;
      }
      return false;
    };

    req.on('data', (chunk: Buffer) => {
      if (settled || tooLarge) return;
      bytes += chunk.length;
      if (bytes > maxBytes) {
        tooLarge = true;
        return;
      }
      hash.update(chunk);
      capture.push(chunk);
      if (checkFaults() || !faults.throttleBytesPerSec) return;
      req.pause();
      setTimeout(() => req.resume(), (chunk.length / faults.throttleBytesPerSec) * 1000);
    });
    req.on('end', () => {
      if (tooLarge) finish({ kind: 'tooLarge', bytes });
      else finish({ kind: 'complete', bytes, sha256: hash.digest('hex'), header: capture.header() });
    });
    // Without an error listener a client abort would crash the process.
    req.on('error', () => finish({ kind: 'short', bytes, expected: declared }));
    req.on('close', () => {
      if (!req.complete) finish({ kind: 'short', bytes, expected: declared });
    });
    if (!tooLarge) checkFaults();
  });
}
