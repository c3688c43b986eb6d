import { readFileSync } from 'node:fs';
import { App } from 'aws-cdk-lib';
import { ArtifactStoreServiceStack } from '../lib/artifact-store-service.js';
import { ArtifactStoreStack } from '../lib/artifact-store-stack.js';

// npx aws-cdk@2 deploy --app 'npx tsx bin/app.ts' -c corsOrigins=https://app.example.com -c publicKeyPem=link-key.pub.pem
// With -c image=<the service's image URI> -c jwtSecretsArn=<secret holding kid:secret>, also the
// replicas (Fargate, behind a load balancer) and their Postgres (RDS): `--all` deploys both.
const app = new App();
const context = (name: string) => app.node.tryGetContext(name) as string | undefined;
const publicKeyPath = context('publicKeyPem');
if (!publicKeyPath)
  throw new Error('Pass -c publicKeyPem=<file>: the PEM public key matching ARTIFACT_STORE_CDN_PRIVATE_KEY_FILE.');

const stackName = context('stackName') ?? 'ArtifactStore';
const env = { account: process.env.CDK_DEFAULT_ACCOUNT, region: process.env.CDK_DEFAULT_REGION };
const storage = new ArtifactStoreStack(app, stackName, {
  corsOrigins: (context('corsOrigins') ?? '')
    .split(',')
    .map((o) => o.trim())
    .filter(Boolean),
  cdnPublicKeyPem: readFileSync(publicKeyPath, 'utf8'),
  keyPrefix: context('keyPrefix'),
  stagingExpiryDays: context('stagingExpiryDays') ? Number(context('stagingExpiryDays')) : undefined,
  env,
});

const image = context('image');
const jwtSecretsArn = context('jwtSecretsArn');
if (image && jwtSecretsArn)
  new ArtifactStoreServiceStack(app, `${stackName}Service`, {
    storage,
    image,
    jwtSecretsArn,
    replicas: context('replicas') ? Number(context('replicas')) : undefined,
    env,
  });
else if (image || jwtSecretsArn) throw new Error('The replicas need both -c image=… and -c jwtSecretsArn=….');
