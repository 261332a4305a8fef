package main

import (
	"fmt"
	"path/filepath"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsiam"
	"github.com/aws/aws-cdk-go/awscdk/v2/awslambda"
	"github.com/aws/aws-cdk-go/awscdk/v2/awslogs"
	"github.com/aws/aws-cdk-go/awscdk/v2/awssecretsmanager"
	"github.com/aws/constructs-go/constructs/v10"
	"github.com/aws/jsii-runtime-go"
	"github.com/toolshed/toolshed/shared/config"
	"github.com/toolshed/toolshed/shared/deploy"
	"github.com/toolshed/toolshed/shared/family"
	"github.com/toolshed/toolshed/shared/secrets"
	"github.com/toolshed/toolshed/shared/settings"
	"github.com/toolshed/toolshed/shared/wiring"
)

// Build folders (and names, in logs and on the dashboard) of the functions
// that are not tools.
const (
	gatewayName   = "gateway"
	authorizerDir = "authorizer"
	indexerDir    = "indexer"
	// indexWorkerName is the index worker's name: the indexer's
	// bootstrap, deployed a second time with its own settings.
	indexWorkerName = "index-worker"
)

// otherFunctionNames are the functions that are not tools.
var otherFunctionNames = []string{gatewayName, authorizerDir, indexerDir, indexWorkerName}

// lambdaArchitecture is deploy.Architecture as CDK names it.
func lambdaArchitecture() awslambda.Architecture {
	if deploy.Architecture == "x86_64" {
		return awslambda.Architecture_X86_64()
	}
	return awslambda.Architecture_ARM_64()
}

// functionSpec is what newFunction needs to create one Lambda function.
type functionSpec struct {
	Name           string // the tool's or function's name (logs, dashboard, concurrency)
	ID             string // construct id prefix, e.g. "AddTask"
	Dir            string // folder under the build folder
	TimeoutSeconds float64
	MemoryMB       float64
	StorageMB      float64 // ephemeral storage (/tmp); 0: Lambda's default, 512 MB
	Concurrency    int     // reserved concurrency, as declared (0: none)
	Env            map[string]*string
	Layers         []awslambda.ILayerVersion
}

// monitored is a function with the timeout its duration alarm compares against.
type monitored struct {
	Name           string
	Fn             awslambda.Function
	TimeoutSeconds float64
}

// newFunction creates an arm64 provided.al2023 function with X-Ray
// tracing, its own log group (logGroupName, kept for a month) and its own
// role, which may write to that log group and nothing else until its
// grants are added. It is watched by the alarms and the dashboard.
func (d *deployment) newFunction(spec functionSpec) awslambda.Function {
	logs := awslogs.NewLogGroup(d.stack, jsii.String(spec.ID+"Logs"), &awslogs.LogGroupProps{
		LogGroupName:  jsii.String(d.logGroupName(spec.Name)),
		Retention:     logRetention,
		RemovalPolicy: awscdk.RemovalPolicy_DESTROY,
	})
	role := awsiam.NewRole(d.stack, jsii.String(spec.ID+"Role"), &awsiam.RoleProps{
		AssumedBy:   awsiam.NewServicePrincipal(jsii.String("lambda.amazonaws.com"), nil),
		Description: jsii.String("Toolshed " + spec.Name + " function"),
	})
	logs.GrantWrite(role)
	props := &awslambda.FunctionProps{
		Runtime:      awslambda.Runtime_PROVIDED_AL2023(),
		Architecture: lambdaArchitecture(),
		Handler:      jsii.String("bootstrap"),
		Code:         awslambda.Code_FromAsset(jsii.String(filepath.Join(d.buildDir, spec.Dir)), nil),
		MemorySize:   jsii.Number(spec.MemoryMB),
		Timeout:      awscdk.Duration_Seconds(jsii.Number(spec.TimeoutSeconds)),
		Tracing:      awslambda.Tracing_ACTIVE,
		LogGroup:     logs,
		Role:         role,
		Environment:  &spec.Env,
	}
	if n := d.opts.Concurrency.of(spec.Name, spec.Concurrency); n > 0 {
		props.ReservedConcurrentExecutions = jsii.Number(float64(n))
	}
	if spec.StorageMB > 0 {
		props.EphemeralStorageSize = awscdk.Size_Mebibytes(jsii.Number(spec.StorageMB))
	}
	if len(spec.Layers) > 0 {
		props.Layers = &spec.Layers
	}
	fn := awslambda.NewFunction(d.stack, jsii.String(spec.ID+"Function"), props)
	d.watched = append(d.watched, monitored{Name: spec.Name, Fn: fn, TimeoutSeconds: spec.TimeoutSeconds})
	return fn
}

// logGroupName is the log group of the named function (or of the API's
// access log): the stack's prefix (outputs.go) and the name.
func (d *deployment) logGroupName(name string) string {
	return "/" + *d.stack.StackName() + "/" + name
}

// newToolFunctions creates the tool functions (the shared tool bootstrap):
// one per tool, or one for the tools of a family deployed as one
// (toolFunctions), each with exactly its grants and its family's layers.
func (d *deployment) newToolFunctions() {
	d.toolFns = map[string]awslambda.Function{}
	for _, tf := range toolFunctions {
		var layers []awslambda.ILayerVersion
		for _, name := range tf.Family.Layers {
			layers = append(layers, d.layer(name))
		}
		fn := d.newFunction(functionSpec{
			Name:           tf.Name,
			ID:             constructID(tf.Name),
			Dir:            toolDir,
			TimeoutSeconds: tf.TimeoutSeconds,
			MemoryMB:       tf.MemoryMB,
			StorageMB:      tf.StorageMB,
			Concurrency:    tf.Family.Concurrency,
			Env:            d.toolEnv(tf.Function),
			Layers:         layers,
		})
		for _, g := range tf.Grants {
			fn.AddToRolePolicy(d.statement(g))
		}
		d.grantSecrets(fn, tf.Settings())
		d.toolFns[tf.Name] = fn
	}
}

// layer returns the Lambda layer of that name (family.Layers), made from
// its build folder (deploy.LayerFolder) the first time a function needs
// it, for the functions' runtime and architecture.
func (d *deployment) layer(name string) awslambda.ILayerVersion {
	if l, ok := d.layers[name]; ok {
		return l
	}
	l := awslambda.NewLayerVersion(d.stack, jsii.String(constructID(name)+"Layer"), &awslambda.LayerVersionProps{
		Code:                    awslambda.Code_FromAsset(jsii.String(filepath.Join(d.buildDir, deploy.LayerFolder(name))), nil),
		CompatibleArchitectures: &[]awslambda.Architecture{lambdaArchitecture()},
		CompatibleRuntimes:      &[]awslambda.Runtime{awslambda.Runtime_PROVIDED_AL2023()},
		Description:             jsii.String("Toolshed: the " + name + " layer (" + deploy.LayerFolder(name) + ")"),
		RemovalPolicy:           awscdk.RemovalPolicy_DESTROY,
	})
	if d.layers == nil {
		d.layers = map[string]awslambda.ILayerVersion{}
	}
	d.layers[name] = l
	return l
}

// newGateway creates the MCP endpoint's function, which may invoke each
// tool function and no other.
func (d *deployment) newGateway() {
	names := make(map[string]interface{}, len(tools))
	for _, tool := range tools {
		names[tool.Name] = d.toolFns[tool.Function.Name].FunctionName()
	}
	var invokable []*string
	for _, tf := range toolFunctions {
		fn := d.toolFns[tf.Name]
		invokable = append(invokable, fn.FunctionArn(), jsii.String(*fn.FunctionArn()+":*"))
	}
	d.gateway = d.newFunction(functionSpec{
		Name:           gatewayName,
		ID:             "Gateway",
		Dir:            gatewayName,
		TimeoutSeconds: deploy.GatewayTimeoutSeconds,
		MemoryMB:       deploy.GatewayMemoryMB,
		Concurrency:    deploy.GatewayConcurrency,
		Env:            map[string]*string{config.ToolFunctions.Name(): d.stack.ToJsonString(names, nil)},
	})
	d.gateway.AddToRolePolicy(awsiam.NewPolicyStatement(&awsiam.PolicyStatementProps{
		Actions:   jsii.Strings("lambda:InvokeFunction"),
		Resources: &invokable,
	}))
}

// newAuthorizer creates the Lambda authorizer, which reads the API keys
// table and nothing else.
func (d *deployment) newAuthorizer() {
	keys := d.tables[config.APIKeysTable]
	d.authorizer = d.newFunction(functionSpec{
		Name:           authorizerDir,
		ID:             "Authorizer",
		Dir:            authorizerDir,
		TimeoutSeconds: deploy.AuthorizerTimeoutSeconds,
		MemoryMB:       deploy.AuthorizerMemoryMB,
		Concurrency:    deploy.AuthorizerConcurrency,
		Env: map[string]*string{
			config.Store.Name(): jsii.String(string(config.StoreDynamoDB)),
			config.TableSettings[config.APIKeysTable].Name(): keys.TableName(),
		},
	})
	d.authorizer.AddToRolePolicy(d.readAPIKeys())
}

// toolEnv is a tool function's environment, as deploy.Env describes it,
// with the stack's table and bucket names and the settings the
// deployment chose.
func (d *deployment) toolEnv(fn deploy.Function) map[string]*string {
	return jsiiEnv(deploy.Env(fn, deploy.Deployment{
		TableName:   func(t config.Table) string { return *d.tables[t].TableName() },
		Bucket:      *d.bucket.BucketName(),
		DefaultRepo: d.opts.DefaultRepo,
		Getenv:      d.setting,
	}))
}

// setting is the value of a function's setting: the one the deployment
// chose, or else the one the stack gives it (newCursorKey).
func (d *deployment) setting(name string) string {
	if v := d.opts.Settings[name]; v != "" {
		return v
	}
	return d.stackSettings[name]
}

// cursorKeySecret names the secret newCursorKey generates, after the stack.
func (d *deployment) cursorKeySecret() string { return *d.stack.StackName() + "-cursor-key" }

// newCursorKey gives the functions that page the key of their cursors
// (wiring.CursorKey), one for the whole deployment: unless the deployment
// names its own parameter (-c TOOLSHED_CURSOR_KEY=ssm:/name), a Secrets
// Manager secret whose value CloudFormation generates, so the template
// holds only how to make it; the functions read it at start through
// Parameter Store's reference to it, as any secret setting. It goes with
// the stack.
func (d *deployment) newCursorKey() {
	if d.opts.Settings[wiring.CursorKey.Name()] != "" {
		return
	}
	awssecretsmanager.NewSecret(d.stack, jsii.String("CursorKey"), &awssecretsmanager.SecretProps{
		SecretName:  jsii.String(d.cursorKeySecret()),
		Description: jsii.String("Toolshed: the key that authenticates the list tools' paging cursors"),
		GenerateSecretString: &awssecretsmanager.SecretStringGenerator{
			PasswordLength:     jsii.Number(64),
			ExcludePunctuation: jsii.Bool(true),
		},
		RemovalPolicy: awscdk.RemovalPolicy_DESTROY,
	})
	d.stackSettings = map[string]string{
		wiring.CursorKey.Name(): secrets.RefPrefix + secrets.SecretsManagerPrefix + d.cursorKeySecret(),
	}
}

// grantSecrets lets fn read the parameters of the secret settings among
// declared that the deployment chose (deploy.SecretParameters), and the
// Secrets Manager secrets some of them refer to.
func (d *deployment) grantSecrets(fn awslambda.Function, declared []settings.Setting) {
	for _, name := range deploy.SecretParameters(declared, d.setting) {
		fn.AddToRolePolicy(awsiam.NewPolicyStatement(&awsiam.PolicyStatementProps{
			Actions:   jsii.Strings("ssm:GetParameter"),
			Resources: jsii.Strings(d.arn("ssm", "parameter/"+trimSlash(name))),
		}))
		if secret, ok := secrets.ReferencedSecret(name); ok {
			fn.AddToRolePolicy(awsiam.NewPolicyStatement(&awsiam.PolicyStatementProps{
				Actions: jsii.Strings("secretsmanager:GetSecretValue"),
				// Secrets Manager ends a secret's ARN with "-" and six
				// characters of its own.
				Resources: jsii.Strings(d.arn("secretsmanager", "secret:"+secret+"-??????")),
			}))
		}
	}
}

// arn is the ARN of a resource of service in the stack's account and region.
func (d *deployment) arn(service, resource string) string {
	return fmt.Sprintf("arn:%s:%s:%s:%s:%s", *d.stack.Partition(), service, *d.stack.Region(), *d.stack.Account(), resource)
}

func trimSlash(s string) string {
	if len(s) > 0 && s[0] == '/' {
		return s[1:]
	}
	return s
}

func jsiiEnv(env map[string]string) map[string]*string {
	out := make(map[string]*string, len(env))
	for k, v := range env {
		out[k] = jsii.String(v)
	}
	return out
}

// statement turns a family grant into an IAM statement on exactly its resource.
func (d *deployment) statement(g family.Grant) awsiam.PolicyStatement {
	props := &awsiam.PolicyStatementProps{Actions: jsii.Strings(g.Actions...)}
	switch g.Kind {
	case family.TableGrant:
		props.Resources = jsii.Strings(*d.tables[g.Table].TableArn())
	case family.ObjectGrant:
		props.Resources = jsii.Strings(*d.bucket.ArnForObjects(jsii.String(g.Prefix + "*")))
	case family.ListGrant:
		props.Resources = jsii.Strings(*d.bucket.BucketArn())
		props.Conditions = &map[string]interface{}{
			"StringLike": map[string]interface{}{"s3:prefix": []string{g.Prefix + "*"}},
		}
	case family.ModelGrant:
		props.Resources = jsii.Strings(fmt.Sprintf("arn:%s:bedrock:%s::foundation-model/%s",
			*d.stack.Partition(), *d.stack.Region(), g.Model))
	}
	return awsiam.NewPolicyStatement(props)
}

// dependOnPolicyOnly leaves each Lambda function's DependsOn with only its
// role's policy (so it never runs before it may do its work). CDK also
// lists the role, on which the function already depends through
// Fn::GetAtt; cfn-lint reports that redundancy (W3005). It covers the
// functions CDK adds itself (the bucket notifications handler) too.
func dependOnPolicyOnly(stack awscdk.Stack) {
	for _, c := range *stack.Node().FindAll(constructs.ConstructOrder_PREORDER) {
		cfnFn, ok := c.(awscdk.CfnResource)
		if !ok || *cfnFn.CfnResourceType() != "AWS::Lambda::Function" {
			continue
		}
		role := roleOf(cfnFn.Node().Scope())
		if role == nil {
			continue
		}
		if policy := role.Node().TryFindChild(jsii.String("DefaultPolicy")); policy != nil {
			cfnPolicy := policy.Node().DefaultChild().(awscdk.CfnElement)
			cfnFn.AddOverride(jsii.String("DependsOn"), []*string{stack.GetLogicalId(cfnPolicy)})
		}
	}
}

// roleOf returns the role of a function construct: ours (newFunction's),
// or the child role of one CDK makes.
func roleOf(fn constructs.IConstruct) constructs.IConstruct {
	if l2, ok := fn.(awslambda.Function); ok && l2.Role() != nil {
		return l2.Role()
	}
	for _, id := range []string{"ServiceRole", "Role"} {
		if role := fn.Node().TryFindChild(jsii.String(id)); role != nil {
			return role
		}
	}
	return nil
}
