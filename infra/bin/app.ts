import { readFileSync } from 'node:fs';
import { App } from 'aws-cdk-lib';
import { ArtifactStoreStack } from '../lib/artifact-store-stack.js';

// npx aws-cdk@2 deploy --app 'npx tsx bin/app.ts' -c corsOrigins=https://app.example.com -c publicKeyPem=link-key.pub.pem
const app = new App();
const context = (name: string) => app.node.tryGetContext(name) as string | undefined;
const publicKeyPath = context('publicKeyPem');
if (!publicKeyPath)
  throw new Error('Pass -c publicKeyPem=<file>: the PEM public key matching ARTIFACT_STORE_CDN_PRIVATE_KEY_FILE.');

new ArtifactStoreStack(app, context('stackName') ?? 'ArtifactStore', {
  corsOrigins: (context('corsOrigins') ?? '')
    .split(',')
    .map((o) => o.trim())
    .filter(Boolean),
  cdnPublicKeyPem: readFileSync(publicKeyPath, 'utf8'),
  keyPrefix: context('keyPrefix'),
  stagingExpiryDays: context('stagingExpiryDays') ? Number(context('stagingExpiryDays')) : undefined,
  env: { account: process.env.CDK_DEFAULT_ACCOUNT, region: process.env.CDK_DEFAULT_REGION },
});
