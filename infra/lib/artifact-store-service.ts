import { CfnOutput, Duration, RemovalPolicy, Stack, type StackProps } from 'aws-cdk-lib';
import * as ec2 from 'aws-cdk-lib/aws-ec2';
import * as ecs from 'aws-cdk-lib/aws-ecs';
import * as ecsPatterns from 'aws-cdk-lib/aws-ecs-patterns';
import * as rds from 'aws-cdk-lib/aws-rds';
import * as secretsmanager from 'aws-cdk-lib/aws-secretsmanager';
import type { Construct } from 'constructs';
import type { ArtifactStoreStack } from './artifact-store-stack.js';

export interface ArtifactStoreServiceStackProps extends StackProps {
  /** The bucket, CDN and policy (ArtifactStoreStack) the replicas store into. */
  storage: ArtifactStoreStack;
  /** The service's image (the repository's Dockerfile, pushed to a registry), e.g. an ECR image URI. */
  image: string;
  /**
   * A Secrets Manager secret whose value is ARTIFACT_STORE_JWT_SECRETS (`kid:secret,…`, 32+
   * characters each): every replica verifies the same tokens and signs the same links.
   */
  jwtSecretsArn: string;
  /** Replicas behind the load balancer (default 2; at least 2, so one can go while the other serves). */
  replicas?: number;
  /** The database instance (default db.t4g.small). */
  databaseInstanceType?: ec2.InstanceType;
  /** A standby in another zone (default true). */
  databaseMultiAz?: boolean;
}

/** The database the replicas share, and its user. */
export const DATABASE_NAME = 'artifacts';
export const DATABASE_USER = 'artifacts';

/**
 * artifact-store past one machine on AWS: stateless replicas (Fargate tasks of the service's image)
 * behind an Application Load Balancer, their metadata in one Postgres (RDS) and their bytes in the
 * storage stack's bucket. The load balancer checks /readyz (503 while a replica drains or cannot
 * reach Postgres); deploys replace tasks one at a time without dropping below the replica count.
 */
export class ArtifactStoreServiceStack extends Stack {
  readonly database: rds.DatabaseInstance;
  readonly service: ecsPatterns.ApplicationLoadBalancedFargateService;

  constructor(scope: Construct, id: string, props: ArtifactStoreServiceStackProps) {
    super(scope, id, props);
    const replicas = props.replicas ?? 2;
    if (!Number.isInteger(replicas) || replicas < 2)
      throw new Error('replicas must be a whole number of at least 2: one replica is one machine to lose');

    const vpc = new ec2.Vpc(this, 'Network', {
      maxAzs: 2,
      natGateways: 1,
      subnetConfiguration: [
        { name: 'public', subnetType: ec2.SubnetType.PUBLIC },
        { name: 'service', subnetType: ec2.SubnetType.PRIVATE_WITH_EGRESS },
        { name: 'database', subnetType: ec2.SubnetType.PRIVATE_ISOLATED },
      ],
    });

    this.database = new rds.DatabaseInstance(this, 'Metadata', {
      engine: rds.DatabaseInstanceEngine.postgres({ version: rds.PostgresEngineVersion.VER_16 }),
      instanceType: props.databaseInstanceType ?? ec2.InstanceType.of(ec2.InstanceClass.T4G, ec2.InstanceSize.SMALL),
      vpc,
      vpcSubnets: { subnetType: ec2.SubnetType.PRIVATE_ISOLATED },
      databaseName: DATABASE_NAME,
      credentials: rds.Credentials.fromGeneratedSecret(DATABASE_USER),
      multiAz: props.databaseMultiAz ?? true,
      storageEncrypted: true,
      allocatedStorage: 20,
      maxAllocatedStorage: 200,
      backupRetention: Duration.days(7),
      deletionProtection: true,
      removalPolicy: RemovalPolicy.SNAPSHOT,
    });

    const cluster = new ecs.Cluster(this, 'Cluster', { vpc });
    const jwtSecrets = secretsmanager.Secret.fromSecretCompleteArn(this, 'JwtSecrets', props.jwtSecretsArn);
    const db = this.database;
    this.service = new ecsPatterns.ApplicationLoadBalancedFargateService(this, 'Replicas', {
      cluster,
      desiredCount: replicas,
      cpu: 1024,
      memoryLimitMiB: 2048,
      publicLoadBalancer: true,
      taskSubnets: { subnetType: ec2.SubnetType.PRIVATE_WITH_EGRESS },
      minHealthyPercent: 100,
      maxHealthyPercent: 200,
      circuitBreaker: { rollback: true },
      taskImageOptions: {
        image: ecs.ContainerImage.fromRegistry(props.image),
        containerPort: 8787,
        environment: {
          ARTIFACT_STORE_ENV: 'production',
          ARTIFACT_STORE_HOST: '0.0.0.0',
          // The password comes from PGPASSWORD (below), which the driver reads, as libpq does.
          ARTIFACT_STORE_DATABASE_URL: `postgres://${DATABASE_USER}@${db.dbInstanceEndpointAddress}:${db.dbInstanceEndpointPort}/${DATABASE_NAME}?sslmode=require`,
          ARTIFACT_STORE_BLOB_DRIVER: 's3',
          ARTIFACT_STORE_S3_BUCKET: props.storage.bucket.bucketName,
          ARTIFACT_STORE_S3_REGION: props.storage.region,
        },
        secrets: {
          PGPASSWORD: ecs.Secret.fromSecretsManager(db.secret!, 'password'),
          ARTIFACT_STORE_JWT_SECRETS: ecs.Secret.fromSecretsManager(jwtSecrets),
        },
      },
    });
    // Longer than an idle event stream's heartbeat (15 s), so /v1/events streams stay open.
    this.service.loadBalancer.setAttribute('idle_timeout.timeout_seconds', '120');
    this.service.targetGroup.configureHealthCheck({ path: '/readyz', healthyHttpCodes: '200' });
    // A draining replica lets transfers in flight finish (ARTIFACT_STORE_SHUTDOWN_GRACE_MS, 30 s).
    this.service.targetGroup.setAttribute('deregistration_delay.timeout_seconds', '35');
    this.service.taskDefinition.taskRole.addManagedPolicy(props.storage.servicePolicy);
    db.connections.allowDefaultPortFrom(this.service.service, 'artifact-store replicas');

    new CfnOutput(this, 'ServiceUrl', {
      value: `http://${this.service.loadBalancer.loadBalancerDnsName}`,
      description: 'the load balancer (put HTTPS in front with a certificate: ARTIFACT_STORE_PUBLIC_URL)',
    });
    new CfnOutput(this, 'DatabaseEndpoint', {
      value: db.dbInstanceEndpointAddress,
      description: 'ARTIFACT_STORE_DATABASE_URL host (artifact-store db migrate, db copy)',
    });
  }
}
