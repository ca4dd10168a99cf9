#!/usr/bin/env bash
# Upload the confirm page (web/) to the stack's private bucket and make CloudFront serve it now.
#
#   infra/upload-site.sh [STACK_NAME]          (default: countersign; region from your AWS config)
#
# SAM creates the bucket and the distribution but never uploads their contents: run this after
# every `sam deploy` that changed web/ (and once after the first). Needs the AWS CLI and
# credentials allowed to read the stack's outputs, write the bucket and invalidate the
# distribution. The page is served with the security headers of the stack's
# ResponseHeadersPolicy; here only the caching of each file is set: index.html and the service
# worker (sw.js) are revalidated on every visit (a deploy shows at once), the other files may be
# reused for 5 minutes (they have no hashed names), as the local server does. The files whose type
# the AWS CLI would not guess right get theirs explicitly (the web app manifest).
set -euo pipefail
cd "$(dirname "$0")/.."

stack=${1:-countersign}
output() {
  aws cloudformation describe-stacks --stack-name "$stack" \
    --query "Stacks[0].Outputs[?OutputKey=='$1'].OutputValue" --output text
}
bucket=$(output SiteBucketName)
distribution=$(output DistributionId)
if [ -z "$bucket" ] || [ "$bucket" = "None" ] || [ -z "$distribution" ] || [ "$distribution" = "None" ]; then
  echo "upload-site.sh: stack $stack has no SiteBucketName/DistributionId outputs (deployed?)" >&2
  exit 1
fi

# Everything but the files below, removing what web/ no longer has.
aws s3 sync web/ "s3://$bucket/" --delete --exclude "index.html" --exclude "sw.js" \
  --exclude "manifest.webmanifest" --exclude ".*" --cache-control "public, max-age=300"
aws s3 cp web/manifest.webmanifest "s3://$bucket/manifest.webmanifest" \
  --cache-control "public, max-age=300" --content-type "application/manifest+json"
aws s3 cp web/sw.js "s3://$bucket/sw.js" \
  --cache-control "no-cache" --content-type "text/javascript; charset=utf-8"
aws s3 cp web/index.html "s3://$bucket/index.html" \
  --cache-control "no-cache" --content-type "text/html; charset=utf-8"

id=$(aws cloudfront create-invalidation --distribution-id "$distribution" --paths "/*" \
  --query "Invalidation.Id" --output text)
echo "uploaded web/ to s3://$bucket; CloudFront invalidation $id started (a minute or two)"
echo "confirm page: $(output ConfirmPageUrl)"
