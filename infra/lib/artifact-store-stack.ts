import { CfnOutput, Duration, RemovalPolicy, Stack, type StackProps } from 'aws-cdk-lib';
import * as cloudfront from 'aws-cdk-lib/aws-cloudfront';
import * as origins from 'aws-cdk-lib/aws-cloudfront-origins';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as s3 from 'aws-cdk-lib/aws-s3';
import type { Construct } from 'constructs';

export interface ArtifactStoreStackProps extends StackProps {
  /** Browser origins allowed to GET / PUT the bucket directly (direct links and direct uploads). */
  corsOrigins: string[];
  /**
   * PEM of the RSA public key whose private key the service signs CloudFront URLs with
   * (ARTIFACT_STORE_CDN_PRIVATE_KEY_FILE). The distribution serves signed requests only.
   */
  cdnPublicKeyPem: string;
  /** ARTIFACT_STORE_S3_PREFIX, e.g. "artifacts/" (default none). */
  keyPrefix?: string;
  /** Staging objects (puts and direct uploads in flight) older than this are deleted (default 1 day). */
  stagingExpiryDays?: number;
}

/** Query strings the service puts on direct links; S3 turns them into the response headers. */
export const RESPONSE_OVERRIDES = ['response-content-type', 'response-content-disposition'];

/**
 * Where artifact-store keeps its bytes on AWS: a private bucket, a CloudFront distribution that
 * reads it through origin access control and serves signed URLs only, and the least-privilege
 * policy the service's role needs.
 */
export class ArtifactStoreStack extends Stack {
  readonly bucket: s3.Bucket;
  readonly distribution: cloudfront.Distribution;
  readonly servicePolicy: iam.ManagedPolicy;

  constructor(scope: Construct, id: string, props: ArtifactStoreStackProps) {
    super(scope, id, props);
    const prefix = props.keyPrefix ?? '';
    if (prefix && !prefix.endsWith('/')) throw new Error('keyPrefix must end with "/"');

    this.bucket = new s3.Bucket(this, 'Blobs', {
      blockPublicAccess: s3.BlockPublicAccess.BLOCK_ALL,
      encryption: s3.BucketEncryption.S3_MANAGED,
      enforceSSL: true,
      removalPolicy: RemovalPolicy.RETAIN,
      lifecycleRules: [
        { id: 'expire-staging', prefix: `${prefix}staging/`, expiration: Duration.days(props.stagingExpiryDays ?? 1) },
        { id: 'abort-incomplete-multipart', abortIncompleteMultipartUploadAfter: Duration.days(1) },
      ],
      cors:
        props.corsOrigins.length > 0
          ? [
              {
                allowedOrigins: props.corsOrigins,
                allowedMethods: [s3.HttpMethods.GET, s3.HttpMethods.HEAD, s3.HttpMethods.PUT],
                // x-amz-content-sha256: direct uploads are signed with the declared sha256 (docs/s3-and-cdn.md).
                allowedHeaders: ['Content-Type', 'Range', 'x-amz-content-sha256'],
                exposedHeaders: ['ETag', 'Content-Length', 'Content-Range', 'Content-Disposition'],
                maxAge: 600,
              },
            ]
          : undefined,
    });

    const publicKey = new cloudfront.PublicKey(this, 'LinkKey', { encodedKey: props.cdnPublicKeyPem });
    const keyGroup = new cloudfront.KeyGroup(this, 'LinkKeys', { items: [publicKey] });
    // The override query strings are part of the cache key, so CloudFront also forwards them to S3.
    const cachePolicy = new cloudfront.CachePolicy(this, 'BlobCache', {
      queryStringBehavior: cloudfront.CacheQueryStringBehavior.allowList(...RESPONSE_OVERRIDES),
      headerBehavior: cloudfront.CacheHeaderBehavior.none(),
      cookieBehavior: cloudfront.CacheCookieBehavior.none(),
      defaultTtl: Duration.days(1),
      maxTtl: Duration.days(365),
      minTtl: Duration.seconds(0),
      enableAcceptEncodingGzip: false,
      enableAcceptEncodingBrotli: false,
    });
    this.distribution = new cloudfront.Distribution(this, 'Cdn', {
      comment: 'artifact-store signed downloads',
      defaultBehavior: {
        origin: origins.S3BucketOrigin.withOriginAccessControl(this.bucket),
        viewerProtocolPolicy: cloudfront.ViewerProtocolPolicy.HTTPS_ONLY,
        allowedMethods: cloudfront.AllowedMethods.ALLOW_GET_HEAD,
        cachePolicy,
        trustedKeyGroups: [keyGroup],
      },
    });

    // What the service does with the bucket, and nothing more.
    const objects = [this.bucket.arnForObjects(`${prefix}blobs/*`), this.bucket.arnForObjects(`${prefix}staging/*`)];
    this.servicePolicy = new iam.ManagedPolicy(this, 'ServicePolicy', {
      description: 'artifact-store service: read, write and delete its blobs and staging objects',
      statements: [
        new iam.PolicyStatement({
          sid: 'Objects',
          actions: [
            's3:GetObject',
            's3:PutObject',
            's3:DeleteObject',
            's3:AbortMultipartUpload',
            's3:ListMultipartUploadParts',
          ],
          resources: objects,
        }),
        // Without ListBucket, S3 answers 403 instead of 404 for a missing key; retention and fsck
        // also list blobs, staging objects and unfinished multipart uploads.
        new iam.PolicyStatement({
          sid: 'Bucket',
          actions: ['s3:ListBucket', 's3:ListBucketMultipartUploads'],
          resources: [this.bucket.bucketArn],
        }),
        // Purges drop the CDN's cached copy of deleted bytes.
        new iam.PolicyStatement({
          sid: 'Invalidate',
          actions: ['cloudfront:CreateInvalidation'],
          resources: [this.distribution.distributionArn],
        }),
      ],
    });

    new CfnOutput(this, 'BucketName', { value: this.bucket.bucketName, description: 'ARTIFACT_STORE_S3_BUCKET' });
    new CfnOutput(this, 'Region', { value: this.region, description: 'ARTIFACT_STORE_S3_REGION' });
    new CfnOutput(this, 'CdnUrl', {
      value: `https://${this.distribution.distributionDomainName}`,
      description: 'ARTIFACT_STORE_CDN_URL',
    });
    new CfnOutput(this, 'CdnKeyPairId', {
      value: publicKey.publicKeyId,
      description: 'ARTIFACT_STORE_CDN_KEY_PAIR_ID',
    });
    new CfnOutput(this, 'CdnDistributionId', {
      value: this.distribution.distributionId,
      description: 'ARTIFACT_STORE_CDN_DISTRIBUTION_ID',
    });
    new CfnOutput(this, 'ServicePolicyArn', {
      value: this.servicePolicy.managedPolicyArn,
      description: "attach to the service's IAM role",
    });
  }
}
