/**
 * What CloudFormation's execution role must be allowed to create, update and delete each resource type
 * the templates may hold, and on which resources: the table ./executionPolicy.ts builds each stack's
 * execution policy from. Resources are named by the stack wherever AWS's ARNs carry a name:
 * `{stack}` (e.g. `PetStore-staging`, the prefix of every name CloudFormation generates) and `{lower}`
 * (`petstore-staging`, the prefix of the names the app gives). A type missing here fails
 * test/infra/executionPolicy.test.ts, which names it: add it before deploying it.
 */

export interface Grant {
  readonly actions: readonly string[];
  /** ARN patterns; `<account>` and `<region>` are filled when the policy is created, `{stack}`, `{lower}`, `{qualifier}` here. */
  readonly resources: readonly string[];
}

const ARN = {
  apigateway: (path: string) => `arn:aws:apigateway:<region>::${path}`,
  lambda: 'arn:aws:lambda:<region>:<account>:function:{stack}-*',
  table: 'arn:aws:dynamodb:<region>:<account>:table/{stack}-*',
  logGroups: [
    'arn:aws:logs:<region>:<account>:log-group:{stack}-*',
    'arn:aws:logs:<region>:<account>:log-group:aws-waf-logs-{lower}-*',
  ],
  role: 'arn:aws:iam::<account>:role/{stack}-*',
  managedPolicy: 'arn:aws:iam::<account>:policy/{stack}-*',
  topic: 'arn:aws:sns:<region>:<account>:{stack}-*',
  alarms: [
    'arn:aws:cloudwatch:<region>:<account>:alarm:{lower}-*',
    'arn:aws:cloudwatch:<region>:<account>:alarm:{stack}-*',
  ],
  dashboards: ['arn:aws:cloudwatch::<account>:dashboard/{lower}*', 'arn:aws:cloudwatch::<account>:dashboard/{stack}-*'],
  codeDeployApplication: 'arn:aws:codedeploy:<region>:<account>:application:{stack}-*',
  deploymentGroup: 'arn:aws:codedeploy:<region>:<account>:deploymentgroup:{stack}-*/*',
  webAcl: [
    'arn:aws:wafv2:<region>:<account>:regional/webacl/{lower}/*',
    'arn:aws:wafv2:<region>:<account>:regional/webacl/{lower}-*/*',
  ],
  wafSets: (kind: string) => [
    `arn:aws:wafv2:<region>:<account>:regional/${kind}/{lower}/*`,
    `arn:aws:wafv2:<region>:<account>:regional/${kind}/{lower}-*/*`,
  ],
  // Backup names its vaults and plans from construct paths (`PetStoreproductionBackupVault...`): no hyphen.
  backupVault: 'arn:aws:backup:<region>:<account>:backup-vault:*',
  backupPlan: 'arn:aws:backup:<region>:<account>:backup-plan:*',
} as const;

const restApis = [ARN.apigateway('/restapis'), ARN.apigateway('/restapis/*'), ARN.apigateway('/tags/*')];
const apiGateway = (resources: readonly string[]): Grant[] => [
  {
    actions: ['apigateway:GET', 'apigateway:POST', 'apigateway:PUT', 'apigateway:PATCH', 'apigateway:DELETE'],
    resources,
  },
];
const tagging = (service: string) => [`${service}:TagResource`, `${service}:UntagResource`];

const lambdaFunction = [ARN.lambda, `${ARN.lambda}:*`];
const lambda = (actions: string[]): Grant[] => [
  { actions: actions.map((a) => `lambda:${a}`), resources: lambdaFunction },
];

const logGroup = (actions: string[]): Grant[] => [
  {
    actions: actions.map((a) => `logs:${a}`),
    resources: ARN.logGroups.flatMap((group) => [group, `${group}:*`]),
  },
];

const role = (actions: string[]): Grant[] => [{ actions: actions.map((a) => `iam:${a}`), resources: [ARN.role] }];

const wafv2 = (actions: string[], resources: readonly string[]): Grant[] => [
  { actions: actions.map((a) => `wafv2:${a}`), resources },
];

/** Every resource type the execution policies can cover, and what each needs. */
export const RESOURCE_ACTIONS: Readonly<Record<string, readonly Grant[]>> = {
  // What `cdk synth` adds for the CDK's version reporting: CloudFormation keeps it, no service is called.
  'AWS::CDK::Metadata': [],
  // API Gateway addresses everything by generated ids: the grants are by path, not by stack.
  'AWS::ApiGateway::RestApi': apiGateway(restApis),
  'AWS::ApiGateway::Resource': apiGateway(restApis),
  'AWS::ApiGateway::Method': apiGateway(restApis),
  'AWS::ApiGateway::Deployment': apiGateway(restApis),
  'AWS::ApiGateway::Stage': apiGateway(restApis),
  'AWS::ApiGateway::Authorizer': apiGateway(restApis),
  'AWS::ApiGateway::GatewayResponse': apiGateway(restApis),
  'AWS::ApiGateway::DocumentationPart': apiGateway(restApis),
  'AWS::ApiGateway::DocumentationVersion': apiGateway(restApis),
  'AWS::ApiGateway::RequestValidator': apiGateway(restApis),
  'AWS::ApiGateway::Model': apiGateway(restApis),
  'AWS::ApiGateway::UsagePlan': apiGateway([ARN.apigateway('/usageplans'), ARN.apigateway('/usageplans/*')]),
  'AWS::ApiGateway::Account': apiGateway([ARN.apigateway('/account')]),

  'AWS::Lambda::Function': [
    ...lambda([
      'CreateFunction',
      'DeleteFunction',
      'GetFunction',
      'GetFunctionConfiguration',
      'UpdateFunctionCode',
      'UpdateFunctionConfiguration',
      'PutFunctionConcurrency',
      'DeleteFunctionConcurrency',
      'GetFunctionCodeSigningConfig',
      'GetRuntimeManagementConfig',
      'PutRuntimeManagementConfig',
      'GetFunctionRecursionConfig',
      'PutFunctionRecursionConfig',
      'ListTags',
      ...['TagResource', 'UntagResource'],
    ]),
    // Lambda reads the code from the stage's bootstrap bucket with the caller's rights.
    {
      actions: ['s3:GetObject', 's3:GetObjectVersion'],
      resources: ['arn:aws:s3:::cdk-{qualifier}-assets-<account>-<region>/*'],
    },
  ],
  'AWS::Lambda::Version': lambda([
    'PublishVersion',
    'GetFunction',
    'GetFunctionConfiguration',
    'ListVersionsByFunction',
    'DeleteFunction',
  ]),
  'AWS::Lambda::Alias': lambda(['CreateAlias', 'UpdateAlias', 'DeleteAlias', 'GetAlias']),
  'AWS::Lambda::Permission': lambda(['AddPermission', 'RemovePermission', 'GetPolicy']),

  'AWS::DynamoDB::Table': [
    {
      actions: [
        'CreateTable',
        'DeleteTable',
        'DescribeTable',
        'UpdateTable',
        'DescribeContinuousBackups',
        'UpdateContinuousBackups',
        'DescribeTimeToLive',
        'UpdateTimeToLive',
        'DescribeContributorInsights',
        'UpdateContributorInsights',
        'DescribeKinesisStreamingDestination',
        'GetResourcePolicy',
        'PutResourcePolicy',
        'DeleteResourcePolicy',
        'ListTagsOfResource',
        'TagResource',
        'UntagResource',
      ].map((a) => `dynamodb:${a}`),
      resources: [ARN.table, `${ARN.table}/*`],
    },
  ],

  'AWS::Logs::LogGroup': logGroup([
    'CreateLogGroup',
    'DeleteLogGroup',
    'DescribeLogGroups',
    'PutRetentionPolicy',
    'DeleteRetentionPolicy',
    'ListTagsForResource',
    'ListTagsLogGroup',
    'TagLogGroup',
    'UntagLogGroup',
    'TagResource',
    'UntagResource',
  ]),
  'AWS::Logs::MetricFilter': logGroup(['PutMetricFilter', 'DeleteMetricFilter', 'DescribeMetricFilters']),

  // The stack's own roles only (CloudFormation names them `<stack>-<logical id>-<suffix>`); which
  // managed policies they may be given, and to which services they may be passed, ./executionPolicy.ts
  // takes from the templates themselves.
  'AWS::IAM::Role': role([
    'CreateRole',
    'DeleteRole',
    'GetRole',
    'UpdateRole',
    'UpdateRoleDescription',
    'UpdateAssumeRolePolicy',
    'TagRole',
    'UntagRole',
    'ListRoleTags',
    'PutRolePolicy',
    'GetRolePolicy',
    'DeleteRolePolicy',
    'ListRolePolicies',
    'ListAttachedRolePolicies',
    'ListInstanceProfilesForRole',
  ]),
  'AWS::IAM::Policy': role(['PutRolePolicy', 'GetRolePolicy', 'DeleteRolePolicy', 'ListRolePolicies']),
  'AWS::IAM::ManagedPolicy': [
    {
      actions: [
        'CreatePolicy',
        'DeletePolicy',
        'GetPolicy',
        'CreatePolicyVersion',
        'DeletePolicyVersion',
        'GetPolicyVersion',
        'ListPolicyVersions',
        'ListEntitiesForPolicy',
        'TagPolicy',
        'UntagPolicy',
      ].map((a) => `iam:${a}`),
      resources: [ARN.managedPolicy],
    },
  ],

  'AWS::CodeDeploy::Application': [
    {
      actions: [
        'codedeploy:CreateApplication',
        'codedeploy:DeleteApplication',
        'codedeploy:GetApplication',
        'codedeploy:ListTagsForResource',
        ...tagging('codedeploy'),
      ],
      resources: [ARN.codeDeployApplication],
    },
  ],
  'AWS::CodeDeploy::DeploymentGroup': [
    {
      actions: [
        'codedeploy:CreateDeploymentGroup',
        'codedeploy:UpdateDeploymentGroup',
        'codedeploy:DeleteDeploymentGroup',
        'codedeploy:GetDeploymentGroup',
        // A canary alias update (UpdatePolicy CodeDeployLambdaAliasUpdate) is a deployment in the group.
        'codedeploy:CreateDeployment',
        'codedeploy:GetDeployment',
        'codedeploy:StopDeployment',
      ],
      resources: [ARN.deploymentGroup],
    },
    {
      actions: ['codedeploy:RegisterApplicationRevision', 'codedeploy:GetApplicationRevision'],
      resources: [ARN.codeDeployApplication],
    },
    {
      actions: ['codedeploy:GetDeploymentConfig'],
      resources: ['arn:aws:codedeploy:<region>:<account>:deploymentconfig:*'],
    },
  ],
  'AWS::CodeDeploy::DeploymentConfig': [
    {
      actions: [
        'codedeploy:CreateDeploymentConfig',
        'codedeploy:DeleteDeploymentConfig',
        'codedeploy:GetDeploymentConfig',
      ],
      resources: ['arn:aws:codedeploy:<region>:<account>:deploymentconfig:{stack}-*'],
    },
  ],

  'AWS::CloudWatch::Alarm': [
    {
      actions: [
        'cloudwatch:PutMetricAlarm',
        'cloudwatch:DeleteAlarms',
        'cloudwatch:DescribeAlarms',
        'cloudwatch:ListTagsForResource',
        ...tagging('cloudwatch'),
      ],
      resources: ARN.alarms,
    },
  ],
  'AWS::CloudWatch::CompositeAlarm': [
    {
      actions: [
        'cloudwatch:PutCompositeAlarm',
        'cloudwatch:DeleteAlarms',
        'cloudwatch:DescribeAlarms',
        'cloudwatch:ListTagsForResource',
        ...tagging('cloudwatch'),
      ],
      resources: ARN.alarms,
    },
  ],
  'AWS::CloudWatch::Dashboard': [
    {
      actions: ['cloudwatch:PutDashboard', 'cloudwatch:DeleteDashboards', 'cloudwatch:GetDashboard'],
      resources: ARN.dashboards,
    },
  ],

  'AWS::SNS::Topic': [
    {
      actions: [
        'sns:CreateTopic',
        'sns:DeleteTopic',
        'sns:GetTopicAttributes',
        'sns:SetTopicAttributes',
        'sns:ListSubscriptionsByTopic',
        'sns:ListTagsForResource',
        ...tagging('sns'),
      ],
      resources: [ARN.topic],
    },
  ],
  'AWS::SNS::TopicPolicy': [{ actions: ['sns:SetTopicAttributes', 'sns:GetTopicAttributes'], resources: [ARN.topic] }],
  'AWS::SNS::Subscription': [
    {
      actions: [
        'sns:Subscribe',
        'sns:Unsubscribe',
        'sns:GetSubscriptionAttributes',
        'sns:SetSubscriptionAttributes',
        'sns:ListSubscriptionsByTopic',
      ],
      resources: [ARN.topic],
    },
  ],

  'AWS::WAFv2::WebACL': [
    ...wafv2(
      [
        'CreateWebACL',
        'UpdateWebACL',
        'DeleteWebACL',
        'GetWebACL',
        'ListTagsForResource',
        'TagResource',
        'UntagResource',
      ],
      ARN.webAcl,
    ),
    // What a web ACL's rules reference: AWS's managed rule groups and the stage's own sets.
    ...wafv2(
      ['CreateWebACL', 'UpdateWebACL'],
      [
        'arn:aws:wafv2:<region>:<account>:regional/managedruleset/*/*',
        ...ARN.wafSets('ipset'),
        ...ARN.wafSets('regexpatternset'),
        ...ARN.wafSets('rulegroup'),
      ],
    ),
  ],
  'AWS::WAFv2::WebACLAssociation': [
    ...wafv2(['AssociateWebACL', 'DisassociateWebACL', 'GetWebACLForResource', 'GetWebACL'], ARN.webAcl),
    { actions: ['apigateway:SetWebACL'], resources: [ARN.apigateway('/restapis/*/stages/*')] },
  ],
  'AWS::WAFv2::LoggingConfiguration': [
    ...wafv2(['PutLoggingConfiguration', 'DeleteLoggingConfiguration', 'GetLoggingConfiguration'], ARN.webAcl),
    // WAF delivers its log through CloudWatch Logs' log delivery (UNSCOPED_ACTIONS below) into the group.
    ...logGroup(['DescribeLogGroups']),
  ],
  'AWS::WAFv2::IPSet': wafv2(
    ['CreateIPSet', 'UpdateIPSet', 'DeleteIPSet', 'GetIPSet', 'ListTagsForResource', 'TagResource', 'UntagResource'],
    ARN.wafSets('ipset'),
  ),
  'AWS::WAFv2::RegexPatternSet': wafv2(
    [
      'CreateRegexPatternSet',
      'UpdateRegexPatternSet',
      'DeleteRegexPatternSet',
      'GetRegexPatternSet',
      'ListTagsForResource',
      'TagResource',
      'UntagResource',
    ],
    ARN.wafSets('regexpatternset'),
  ),
  'AWS::WAFv2::RuleGroup': wafv2(
    [
      'CreateRuleGroup',
      'UpdateRuleGroup',
      'DeleteRuleGroup',
      'GetRuleGroup',
      'ListTagsForResource',
      'TagResource',
      'UntagResource',
    ],
    ARN.wafSets('rulegroup'),
  ),

  'AWS::Backup::BackupVault': [
    {
      actions: [
        'backup:CreateBackupVault',
        'backup:DeleteBackupVault',
        'backup:DescribeBackupVault',
        'backup:PutBackupVaultAccessPolicy',
        'backup:DeleteBackupVaultAccessPolicy',
        'backup:GetBackupVaultAccessPolicy',
        'backup:PutBackupVaultLockConfiguration',
        'backup:DeleteBackupVaultLockConfiguration',
        'backup:PutBackupVaultNotifications',
        'backup:DeleteBackupVaultNotifications',
        'backup:GetBackupVaultNotifications',
        'backup:ListTags',
        ...tagging('backup'),
      ],
      resources: [ARN.backupVault],
    },
  ],
  'AWS::Backup::BackupPlan': [
    {
      actions: [
        'backup:CreateBackupPlan',
        'backup:UpdateBackupPlan',
        'backup:DeleteBackupPlan',
        'backup:GetBackupPlan',
        'backup:ListTags',
        ...tagging('backup'),
      ],
      resources: [ARN.backupPlan],
    },
  ],
  'AWS::Backup::BackupSelection': [
    {
      actions: ['backup:CreateBackupSelection', 'backup:DeleteBackupSelection', 'backup:GetBackupSelection'],
      resources: [ARN.backupPlan],
    },
  ],
};

/**
 * Actions AWS authorizes on no resource (`*` only), granted only when a template holds a type that
 * needs them: CloudWatch Logs' log deliveries and resource policies (WAF logging), and Backup's
 * vault storage.
 */
export const UNSCOPED_ACTIONS: Readonly<Record<string, readonly string[]>> = {
  'AWS::WAFv2::LoggingConfiguration': [
    'logs:CreateLogDelivery',
    'logs:DeleteLogDelivery',
    'logs:GetLogDelivery',
    'logs:UpdateLogDelivery',
    'logs:ListLogDeliveries',
    'logs:PutResourcePolicy',
    'logs:DescribeResourcePolicies',
  ],
  'AWS::Backup::BackupVault': ['backup-storage:MountCapsule'],
};
