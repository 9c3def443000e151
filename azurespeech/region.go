package azurespeech

import "strings"

// geographies are the data regions of Azure's speech regions (learn.microsoft.com
// /azure/ai-services/speech-service/regions, and Azure's geographies): "eu" for the European
// Union's, "uk", "ch", "us" and so on for the others.
var geographies = map[string]string{
	"westeurope": "eu", "northeurope": "eu", "francecentral": "eu", "francesouth": "eu",
	"germanywestcentral": "eu", "germanynorth": "eu", "swedencentral": "eu", "italynorth": "eu",
	"polandcentral": "eu", "spaincentral": "eu",
	"uksouth": "uk", "ukwest": "uk",
	"switzerlandnorth": "ch", "switzerlandwest": "ch",
	"norwayeast": "no", "norwaywest": "no",
	"eastus": "us", "eastus2": "us", "westus": "us", "westus2": "us", "westus3": "us", "centralus": "us",
	"northcentralus": "us", "southcentralus": "us", "westcentralus": "us",
	"canadacentral": "ca", "canadaeast": "ca",
	"brazilsouth":   "br",
	"australiaeast": "au", "australiasoutheast": "au",
	"japaneast": "jp", "japanwest": "jp",
	"koreacentral": "kr",
	"centralindia": "in", "southindia": "in",
	"southeastasia": "sg", "eastasia": "hk",
	"uaenorth": "ae", "qatarcentral": "qa", "southafricanorth": "za",
}

// Geography returns the data region of Azure's speech region ("eu" for "westeurope"), or ""
// for a region it does not know.
func Geography(region string) string { return geographies[strings.ToLower(region)] }

// InRegion reports whether speech processed in Azure's region stays in dataRegion: the region
// itself ("westeurope"), or its geography ("eu").
func InRegion(region, dataRegion string) bool {
	region, dataRegion = strings.ToLower(region), strings.ToLower(dataRegion)
	return region != "" && (region == dataRegion || geographies[region] == dataRegion)
}
