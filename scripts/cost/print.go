package main

import (
	"fmt"
	"io"
	"slices"
)

// services is the order the bill lists them in.
var services = []string{"Lambda", "API Gateway", "DynamoDB", "S3", "SQS", "Bedrock", "CloudWatch", "Secrets Manager"}

func printBill(w io.Writer, md model, b bill) {
	p := b.Profile
	fmt.Fprintf(w, "\n## %s\n%d agents × %.0f calls a day, %d files (%.0f MB), %.0f pushes a day of %d changed files: %.0f calls and %.0f pushes a month\n\n",
		p.Name, p.Agents, p.CallsPerAgentDay, p.Files, p.MB, p.PushesPerDay, p.ChangedFiles, b.Calls, b.Pushes)
	fmt.Fprintf(w, "| service | item | quantity a month | unit | USD a month |\n|---|---|---:|---|---:|\n")
	var total float64
	for _, s := range services {
		var sub float64
		for _, l := range b.Lines {
			if l.Service == s {
				fmt.Fprintf(w, "| %s | %s | %s | %s | %.2f |\n", s, l.Item, count(l.Quantity), l.Price.Unit, l.USD())
				sub += l.USD()
			}
		}
		fmt.Fprintf(w, "| **%s** | | | | **%.2f** |\n", s, sub)
		total += sub
	}
	fmt.Fprintf(w, "| **total** | | | | **%.2f** |\n\n", total)
	by := func(d driver) float64 {
		var sum float64
		for _, l := range b.Lines {
			if l.Driver == d {
				sum += l.USD()
			}
		}
		return sum
	}
	fmt.Fprintf(w, "Grows with: USD %.4f per 1,000 calls; USD %.4f per push; USD %.2f per GB of repository a month (stored); USD %.2f a month whatever the load.\n",
		by(perCall)/b.Calls*1000, by(perPush)/b.Pushes, by(perSize)/(p.MB/1024), by(perMonth))
	bedrock := 0.0
	for _, l := range b.Lines {
		if l.Service == "Bedrock" {
			bedrock += l.USD()
		}
	}
	fmt.Fprintf(w, "Once, at the first push: USD %.2f of Bedrock tokens to embed the whole repository.\n", md.firstBuildUSD(p))
	c := b.Container
	fmt.Fprintf(w, "One always-on container instead (Fargate arm64, %.0f vCPU, %.0f GB for a %.0f MB resident server): USD %.2f a month, USD %.2f with the same Bedrock tokens.\n",
		c.VCPU, c.GB, c.RSSMB, c.USD(), c.USD()+bedrock)
}

// count prints a quantity: whole when large, else with decimals.
func count(q float64) string {
	if q >= 100 {
		return fmt.Sprintf("%.0f", q)
	}
	return fmt.Sprintf("%.3g", q)
}

func printPrices(w io.Writer) {
	fmt.Fprintf(w, "| USD | per | source | read |\n|---:|---|---|---|\n")
	for _, p := range slices.Clone(prices) {
		fmt.Fprintf(w, "| %.10g | %s | %s | %s |\n", p.USD, p.Unit, p.Source, p.Read)
	}
}
