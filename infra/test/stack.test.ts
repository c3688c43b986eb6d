import { generateKeyPairSync } from 'node:crypto';
import { App } from 'aws-cdk-lib';
import { Match, Template } from 'aws-cdk-lib/assertions';
import { describe, expect, it } from 'vitest';
import { ArtifactStoreStack, RESPONSE_OVERRIDES, type ArtifactStoreStackProps } from '../lib/artifact-store-stack.js';

const publicKeyPem = generateKeyPairSync('rsa', { modulusLength: 2048 })
  .publicKey.export({ type: 'spki', format: 'pem' })
  .toString();

/** Synthesized offline: an explicit account and region, no lookups, no credentials. */
function synth(props: Partial<ArtifactStoreStackProps> = {}) {
  const app = new App();
  const stack = new ArtifactStoreStack(app, 'Test', {
    corsOrigins: ['https://app.example.com'],
    cdnPublicKeyPem: publicKeyPem,
    env: { account: '123456789012', region: 'eu-west-1' },
    ...props,
  });
  return Template.fromStack(stack);
}

type Statement = {
  Action: string | string[];
  Resource: unknown;
  Effect: string;
  Principal?: unknown;
  Condition?: unknown;
};

describe('ArtifactStoreStack', () => {
  const t = synth();

  it('keeps the bucket private and encrypted, and refuses plain HTTP', () => {
    t.resourceCountIs('AWS::S3::Bucket', 1);
    t.hasResourceProperties('AWS::S3::Bucket', {
      PublicAccessBlockConfiguration: {
        BlockPublicAcls: true,
        BlockPublicPolicy: true,
        IgnorePublicAcls: true,
        RestrictPublicBuckets: true,
      },
      BucketEncryption: {
        ServerSideEncryptionConfiguration: [{ ServerSideEncryptionByDefault: { SSEAlgorithm: 'AES256' } }],
      },
    });
    t.hasResource('AWS::S3::Bucket', { DeletionPolicy: 'Retain' });
    const policy = Object.values(t.findResources('AWS::S3::BucketPolicy'))[0] as {
      Properties: { PolicyDocument: { Statement: Statement[] } };
    };
    const denyHttp = policy.Properties.PolicyDocument.Statement.find((s) => s.Effect === 'Deny');
    expect(denyHttp?.Condition).toEqual({ Bool: { 'aws:SecureTransport': 'false' } });
  });

  it('expires staging objects and aborts incomplete multipart uploads', () => {
    t.hasResourceProperties('AWS::S3::Bucket', {
      LifecycleConfiguration: {
        Rules: Match.arrayWith([
          Match.objectLike({ Prefix: 'staging/', ExpirationInDays: 1, Status: 'Enabled' }),
          Match.objectLike({ AbortIncompleteMultipartUpload: { DaysAfterInitiation: 1 }, Status: 'Enabled' }),
        ]),
      },
    });
    const prefixed = synth({ keyPrefix: 'artifacts/', stagingExpiryDays: 3 });
    prefixed.hasResourceProperties('AWS::S3::Bucket', {
      LifecycleConfiguration: {
        Rules: Match.arrayWith([Match.objectLike({ Prefix: 'artifacts/staging/', ExpirationInDays: 3 })]),
      },
    });
  });

  it('lets the configured browser origins GET and PUT directly, and nobody when none are configured', () => {
    t.hasResourceProperties('AWS::S3::Bucket', {
      CorsConfiguration: {
        CorsRules: [
          Match.objectLike({
            AllowedOrigins: ['https://app.example.com'],
            AllowedMethods: ['GET', 'HEAD', 'PUT'],
            // Direct uploads send the declared sha256, which the bucket checks the body against.
            AllowedHeaders: Match.arrayWith(['Content-Type', 'x-amz-content-sha256']),
            ExposedHeaders: Match.arrayWith(['ETag', 'Content-Range', 'Content-Disposition']),
          }),
        ],
      },
    });
    const closed = synth({ corsOrigins: [] });
    closed.hasResourceProperties('AWS::S3::Bucket', { CorsConfiguration: Match.absent() });
  });

  it('puts CloudFront in front through origin access control, signed URLs only, HTTPS only', () => {
    t.resourceCountIs('AWS::CloudFront::OriginAccessControl', 1);
    t.resourceCountIs('AWS::CloudFront::CloudFrontOriginAccessIdentity', 0);
    t.resourceCountIs('AWS::CloudFront::KeyGroup', 1);
    t.hasResourceProperties('AWS::CloudFront::PublicKey', { PublicKeyConfig: { EncodedKey: publicKeyPem } });
    t.hasResourceProperties('AWS::CloudFront::Distribution', {
      DistributionConfig: {
        Origins: [
          Match.objectLike({
            OriginAccessControlId: Match.anyValue(),
            S3OriginConfig: Match.objectLike({ OriginAccessIdentity: '' }),
          }),
        ],
        DefaultCacheBehavior: Match.objectLike({
          ViewerProtocolPolicy: 'https-only',
          AllowedMethods: ['GET', 'HEAD'],
          TrustedKeyGroups: [{ Ref: Match.stringLikeRegexp('LinkKeys') }],
        }),
      },
    });
    // The bucket lets exactly this distribution read it.
    const policy = Object.values(t.findResources('AWS::S3::BucketPolicy'))[0] as {
      Properties: { PolicyDocument: { Statement: Statement[] } };
    };
    const cdnRead = policy.Properties.PolicyDocument.Statement.find((s) =>
      JSON.stringify(s.Principal).includes('cloudfront.amazonaws.com'),
    );
    expect(cdnRead?.Action).toBe('s3:GetObject');
    expect(JSON.stringify(cdnRead?.Condition)).toContain('AWS:SourceArn');
    expect(JSON.stringify(cdnRead?.Condition)).toMatch(/"Ref":"Cdn[0-9A-F]+"/);
  });

  it('keys the cache on the response overrides, so CloudFront forwards them to S3', () => {
    t.hasResourceProperties('AWS::CloudFront::CachePolicy', {
      CachePolicyConfig: {
        ParametersInCacheKeyAndForwardedToOrigin: Match.objectLike({
          QueryStringsConfig: { QueryStringBehavior: 'whitelist', QueryStrings: RESPONSE_OVERRIDES },
          CookiesConfig: { CookieBehavior: 'none' },
        }),
      },
    });
  });

  it('gives the service a least-privilege policy: its objects, listing, and invalidating its distribution, nothing else', () => {
    const policies = Object.values(t.findResources('AWS::IAM::ManagedPolicy')) as {
      Properties: { PolicyDocument: { Statement: Statement[] } };
    }[];
    expect(policies).toHaveLength(1);
    const statements = policies[0]!.Properties.PolicyDocument.Statement;
    const actions = statements.flatMap((s) => (Array.isArray(s.Action) ? s.Action : [s.Action])).sort();
    expect(actions).toEqual([
      'cloudfront:CreateInvalidation',
      's3:AbortMultipartUpload',
      's3:DeleteObject',
      's3:GetObject',
      's3:ListBucket',
      's3:ListBucketMultipartUploads',
      's3:ListMultipartUploadParts',
      's3:PutObject',
    ]);
    expect(statements.every((s) => s.Effect === 'Allow')).toBe(true);
    const resources = JSON.stringify(statements.map((s) => s.Resource));
    expect(resources).not.toContain('"*"');
    expect(actions.some((a) => a.endsWith('*'))).toBe(false);
    const objects = statements.find((s) => s.Action.includes('s3:PutObject'))!;
    expect(JSON.stringify(objects.Resource)).toContain('/blobs/*');
    expect(JSON.stringify(objects.Resource)).toContain('/staging/*');
    const invalidate = statements.find((s) => s.Action === 'cloudfront:CreateInvalidation')!;
    expect(JSON.stringify(invalidate.Resource)).toContain('distribution/');
  });

  it('outputs what the service is configured with', () => {
    for (const name of ['BucketName', 'Region', 'CdnUrl', 'CdnKeyPairId', 'CdnDistributionId', 'ServicePolicyArn'])
      t.hasOutput(name, Match.anyValue());
  });

  it('refuses a key prefix without its trailing slash', () => {
    expect(() => synth({ keyPrefix: 'artifacts' })).toThrow(/end with/);
  });
});
