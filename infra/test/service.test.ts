import { generateKeyPairSync } from 'node:crypto';
import { App } from 'aws-cdk-lib';
import { Match, Template } from 'aws-cdk-lib/assertions';
import { describe, expect, it } from 'vitest';
import { ArtifactStoreStack } from '../lib/artifact-store-stack.js';
import { ArtifactStoreServiceStack, type ArtifactStoreServiceStackProps } from '../lib/artifact-store-service.js';

const publicKeyPem = generateKeyPairSync('rsa', { modulusLength: 2048 })
  .publicKey.export({ type: 'spki', format: 'pem' })
  .toString();
const env = { account: '123456789012', region: 'eu-west-1' };
const JWT_SECRETS_ARN = 'arn:aws:secretsmanager:eu-west-1:123456789012:secret:artifact-store-jwt-AbCdEf';

/** Both stacks synthesized offline: explicit account and region, no lookups, no credentials. */
function synth(props: Partial<ArtifactStoreServiceStackProps> = {}) {
  const app = new App();
  const storage = new ArtifactStoreStack(app, 'Storage', { corsOrigins: [], cdnPublicKeyPem: publicKeyPem, env });
  const stack = new ArtifactStoreServiceStack(app, 'Service', {
    storage,
    image: '123456789012.dkr.ecr.eu-west-1.amazonaws.com/artifact-store:0.2.0',
    jwtSecretsArn: JWT_SECRETS_ARN,
    env,
    ...props,
  });
  return Template.fromStack(stack);
}

describe('ArtifactStoreServiceStack', () => {
  const t = synth();

  it('runs at least two replicas behind a load balancer that checks /readyz, replaced one at a time', () => {
    t.hasResourceProperties('AWS::ECS::Service', {
      DesiredCount: 2,
      LaunchType: 'FARGATE',
      DeploymentConfiguration: Match.objectLike({ MinimumHealthyPercent: 100, MaximumPercent: 200 }),
    });
    t.resourceCountIs('AWS::ElasticLoadBalancingV2::LoadBalancer', 1);
    t.hasResourceProperties('AWS::ElasticLoadBalancingV2::TargetGroup', {
      HealthCheckPath: '/readyz',
      Port: 80,
      TargetGroupAttributes: Match.arrayWith([{ Key: 'deregistration_delay.timeout_seconds', Value: '35' }]),
    });
    t.hasResourceProperties('AWS::ElasticLoadBalancingV2::LoadBalancer', {
      LoadBalancerAttributes: Match.arrayWith([{ Key: 'idle_timeout.timeout_seconds', Value: '120' }]),
    });
    expect(() => synth({ replicas: 1 })).toThrow(/at least 2/);
    synth({ replicas: 4 }).hasResourceProperties('AWS::ECS::Service', { DesiredCount: 4 });
  });

  it('keeps the metadata in an encrypted Postgres (RDS) that only the replicas reach', () => {
    t.hasResourceProperties('AWS::RDS::DBInstance', {
      Engine: 'postgres',
      EngineVersion: Match.stringLikeRegexp('^16'),
      StorageEncrypted: true,
      MultiAZ: true,
      DeletionProtection: true,
      PubliclyAccessible: false,
      DBName: 'artifacts',
      BackupRetentionPeriod: 7,
    });
    // The database's security group lets the replicas' in on its port, and nothing else.
    const ingress = Object.values(t.findResources('AWS::EC2::SecurityGroupIngress')) as {
      Properties: { GroupId: unknown; FromPort: unknown; SourceSecurityGroupId?: unknown; CidrIp?: string };
    }[];
    const toDb = ingress.filter((i) => JSON.stringify(i.Properties.GroupId).includes('MetadataSecurityGroup'));
    expect(toDb).toHaveLength(1);
    expect(JSON.stringify(toDb[0]!.Properties.FromPort)).toContain('Endpoint.Port');
    expect(JSON.stringify(toDb[0]!.Properties.SourceSecurityGroupId)).toMatch(/ReplicasServiceSecurityGroup/);
    expect(toDb[0]!.Properties.CidrIp).toBeUndefined();
    const dbGroup = Object.values(t.findResources('AWS::EC2::SecurityGroup')).find((g) =>
      JSON.stringify(g).includes('Metadata'),
    ) as { Properties: { SecurityGroupIngress?: unknown[] } };
    expect(dbGroup.Properties.SecurityGroupIngress ?? []).toEqual([]);
  });

  it('configures each replica for Postgres, the bucket and shared keys, with secrets from Secrets Manager', () => {
    const task = Object.values(t.findResources('AWS::ECS::TaskDefinition'))[0] as {
      Properties: {
        ContainerDefinitions: {
          Environment: { Name: string; Value: unknown }[];
          Secrets: { Name: string; ValueFrom: unknown }[];
        }[];
      };
    };
    const container = task.Properties.ContainerDefinitions[0]!;
    const envOf = Object.fromEntries(container.Environment.map((e) => [e.Name, JSON.stringify(e.Value)]));
    expect(envOf.ARTIFACT_STORE_DATABASE_URL).toMatch(/postgres:\/\/artifacts@.*sslmode=require/);
    expect(envOf.ARTIFACT_STORE_DATABASE_URL).not.toMatch(/password/i);
    expect(envOf.ARTIFACT_STORE_BLOB_DRIVER).toBe('"s3"');
    expect(envOf.ARTIFACT_STORE_S3_BUCKET).toMatch(/Blobs/);
    expect(envOf.ARTIFACT_STORE_HOST).toBe('"0.0.0.0"');
    const secrets = Object.fromEntries(container.Secrets.map((s) => [s.Name, JSON.stringify(s.ValueFrom)]));
    expect(Object.keys(secrets).sort()).toEqual(['ARTIFACT_STORE_JWT_SECRETS', 'PGPASSWORD']);
    expect(secrets.PGPASSWORD).toMatch(/:password::/);
    expect(secrets.ARTIFACT_STORE_JWT_SECRETS).toContain(JWT_SECRETS_ARN);
  });

  it("gives the replicas' role the storage stack's least-privilege policy", () => {
    t.hasResourceProperties('AWS::IAM::Role', {
      AssumeRolePolicyDocument: Match.objectLike({
        Statement: Match.arrayWith([Match.objectLike({ Principal: { Service: 'ecs-tasks.amazonaws.com' } })]),
      }),
      ManagedPolicyArns: Match.arrayWith([
        Match.objectLike({ 'Fn::ImportValue': Match.stringLikeRegexp('ServicePolicy') }),
      ]),
    });
    t.hasOutput('ServiceUrl', Match.anyValue());
    t.hasOutput('DatabaseEndpoint', Match.anyValue());
  });
});
