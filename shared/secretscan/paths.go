// Package secretscan says whether a repository file holds secrets, as
// secret scanners tell: by its path (PathRules: private keys, credential
// stores and the like, flagged by name whatever they hold) and by its
// content (ContentRules: a private key block, or a credential in a format
// issued only as a secret, whatever the file is called). Each rule has an
// ID, so that a refusal can name the rule that refused.
//
// The rules are data taken from maintained scanners, each entry citing
// its source; the content rules are kept to formats that are rarely
// matched by anything but a real secret, so that ordinary code (a Go file
// that names "RSA PRIVATE KEY" in a string, a comment about tokens) is
// never refused.
package secretscan

// A PathRule is a kind of file that holds secrets by its nature.
type PathRule struct {
	// ID names the rule in refusals.
	ID string
	// What says in a few words what such a file is.
	What string
	// Patterns are doublestar globs on slash paths ("**/id_rsa",
	// "**/.ssh"), matched without regard to case against a path and
	// every folder above it (shared/pathmatch): a pattern that matches a
	// folder covers everything in it.
	Patterns []string
}

// PathRules are the files no repository tool reads, whatever they hold.
//
// Sources, as data (the scanners' own code is not used):
//   - gitleaks v8.30.0, config/gitleaks.toml: its one path-only rule,
//     pkcs12-file (*.p12, *.pfx);
//   - Talisman v1.37.0 (thoughtworks/talisman),
//     detector/filename/filename_detector.go: the file name patterns its
//     detector/severity/severity_config.go rates High, except the
//     substring ones ("private.*key", "(oauth).*(token)") that name
//     ordinary source files (PrivateKeySpec.java, oauth_token.go), and
//     with "_dsa.*" narrowed to "*_dsa" (it matched crypto_dsa_test.go);
//   - gitrob's signatures (michenriksen/gitrob, the list Talisman's
//     descends from) for the credential files neither names: .aws/credentials,
//     .git-credentials, .pgpass, .npmrc, .dockercfg, .s3cfg,
//     .gem/credentials, shell histories, Java keystores (.jks) and
//     KeePass databases (.kdbx);
//   - and what no scanner lists by name but holds credentials by design:
//     a .ssh folder, Terraform state, kubeconfig and Docker's
//     config.json.
//
// The first four rules are this server's own from before (.env files,
// secrets*, *.key, *.pem). Low-severity names (logs, SQL dumps, shell rc
// files, *.asc, settings.py) are left out: they are ordinary files of
// many repositories.
var PathRules = []PathRule{
	{ID: "env-file", What: "an environment file, which commonly holds credentials", Patterns: []string{"**/.env*"}},
	{ID: "secrets-file", What: "a file named for secrets", Patterns: []string{"**/secrets*"}},
	{ID: "key-file", What: "a key file", Patterns: []string{"**/*.key", "**/*.keypair"}},
	{ID: "pem-file", What: "a PEM file, which commonly holds a private key", Patterns: []string{"**/*.pem"}},
	{ID: "ssh-private-key", What: "a private SSH key", Patterns: []string{"**/*_rsa", "**/*_dsa", "**/*_ecdsa", "**/*_ed25519", "**/id_ecdsa_sk", "**/id_ed25519_sk"}},
	{ID: "ssh-folder", What: "an SSH folder (keys, known hosts, configuration)", Patterns: []string{"**/.ssh"}},
	{ID: "putty-private-key", What: "a PuTTY private key", Patterns: []string{"**/*.ppk"}},
	{ID: "pkcs12-file", What: "a PKCS #12 bundle, which commonly holds a private key", Patterns: []string{"**/*.p12", "**/*.pfx", "**/*.pkcs12"}},
	{ID: "keystore", What: "a keystore or keychain", Patterns: []string{"**/*.keystore", "**/*.keyring", "**/*.keychain", "**/*.jks", "**/*.kdbx"}},
	{ID: "htpasswd", What: "an Apache password file", Patterns: []string{"**/.htpasswd", "**/htpasswd"}},
	{ID: "netrc", What: "a .netrc file, which holds logins and passwords", Patterns: []string{"**/.netrc", "**/_netrc", "**/netrc"}},
	{ID: "tunnelblick", What: "a Tunnelblick VPN configuration, which holds its keys", Patterns: []string{"**/*.tblk"}},
	{ID: "jenkins-credentials", What: "a Jenkins credentials file", Patterns: []string{"**/credentials.xml", "**/jenkins.plugins.publish_over_ssh.BapSshPublisherPlugin.xml"}},
	{ID: "rails-secret-token", What: "a Rails secret token", Patterns: []string{"**/secret_token.rb"}},
	{ID: "aws-credentials", What: "an AWS CLI credentials file", Patterns: []string{"**/.aws/credentials"}},
	{ID: "git-credentials", What: "git's credential store", Patterns: []string{"**/.git-credentials"}},
	{ID: "pgpass", What: "a PostgreSQL password file", Patterns: []string{"**/.pgpass"}},
	{ID: "npmrc", What: "an npm configuration, which commonly holds a registry token", Patterns: []string{"**/.npmrc"}},
	{ID: "docker-config", What: "a Docker configuration, which holds registry logins", Patterns: []string{"**/.dockercfg", "**/.docker/config.json"}},
	{ID: "s3cfg", What: "an s3cmd configuration, which holds AWS keys", Patterns: []string{"**/.s3cfg"}},
	{ID: "gem-credentials", What: "a RubyGems credentials file", Patterns: []string{"**/.gem/credentials"}},
	{ID: "shell-history", What: "a shell or database client history, which records typed passwords", Patterns: []string{"**/.*_history"}},
	{ID: "terraform-state", What: "Terraform state, which holds every managed secret in clear", Patterns: []string{"**/*.tfstate", "**/*.tfstate.backup"}},
	{ID: "kubeconfig", What: "a kubeconfig, which holds cluster credentials", Patterns: []string{"**/.kube/config"}},
}
