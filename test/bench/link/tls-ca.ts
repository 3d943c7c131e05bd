/**
 * A private certificate authority for the link benchmark, made with the
 * openssl CLI in a temporary folder: the CA certificate the client trusts
 * (through NODE_EXTRA_CA_CERTS, as a deployment with a private CA would) and a
 * server certificate for localhost and 127.0.0.1 that the link proxies serve.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';

interface BenchCertificates {
  dir: string;
  caCertPath: string;
  serverKeyPath: string;
  serverCertPath: string;
}

function openssl(args: string[], cwd: string): void {
  execFileSync('openssl', args, { cwd, stdio: ['ignore', 'ignore', 'pipe'] });
}

export function makeBenchCertificates(): BenchCertificates {
  const dir = mkdtempSync(path.join(tmpdir(), 'bench-ca-'));
  const ec = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes'];
  openssl(['req', '-x509', ...ec, '-keyout', 'ca.key', '-out', 'ca.pem', '-days', '2', '-subj', '/CN=bench CA'], dir);
  openssl(['req', '-new', ...ec, '-keyout', 'server.key', '-out', 'server.csr', '-subj', '/CN=localhost'], dir);
  writeFileSync(path.join(dir, 'san.ext'), 'subjectAltName=DNS:localhost,IP:127.0.0.1\n');
  openssl(
    [
      'x509',
      '-req',
      '-in',
      'server.csr',
      '-CA',
      'ca.pem',
      '-CAkey',
      'ca.key',
      '-CAcreateserial',
      '-out',
      'server.pem',
      '-days',
      '2',
      '-extfile',
      'san.ext',
    ],
    dir,
  );
  return {
    dir,
    caCertPath: path.join(dir, 'ca.pem'),
    serverKeyPath: path.join(dir, 'server.key'),
    serverCertPath: path.join(dir, 'server.pem'),
  };
}

export function readPem(file: string): string {
  return readFileSync(file, 'utf8');
}
