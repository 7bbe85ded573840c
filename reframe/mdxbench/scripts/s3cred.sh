# Sourced by object-storage job scripts (mdxbench.storage.ObjectTargetTest):
#   . s3cred.sh; mdxbench_s3_credentials TARGET FILE
# Exports WARP_ACCESS_KEY and WARP_SECRET_KEY (which warp reads) for S3 target TARGET:
# kept as they are when the job's environment already has both, else read from FILE,
# which must be a regular file that neither group nor others may read (0600 or 0400) and
# holds `access_key=...` and `secret_key=...` lines (aws_access_key_id and
# aws_secret_access_key are accepted too). Never prints a key; returns 1 with the reason.

mdxbench_s3_credentials() {
    local target=$1 file=$2 mode key val access='' secret=''
    if [ -n "${WARP_ACCESS_KEY:-}" ] && [ -n "${WARP_SECRET_KEY:-}" ]; then
        echo "mdxbench: S3 credentials of $target from the environment (WARP_ACCESS_KEY, WARP_SECRET_KEY)"
        return 0
    fi
    if [ -z "$file" ] || [ ! -f "$file" ]; then
        echo "mdxbench: no S3 credentials for object target $target: neither WARP_ACCESS_KEY and WARP_SECRET_KEY in the environment nor the file ${file:-(none configured)} (mode 0600, lines access_key=... and secret_key=...)" >&2
        return 1
    fi
    mode=$(stat -L -c %a "$file") || return 1
    if [ $(( 8#$mode & 8#077 )) -ne 0 ]; then
        echo "mdxbench: S3 credentials file $file of object target $target has mode $mode: group or others may read it; chmod 600 it" >&2
        return 1
    fi
    while IFS='=' read -r key val || [ -n "$key" ]; do
        key=${key//[[:space:]]/}
        val=${val#"${val%%[![:space:]]*}"}
        val=${val%"${val##*[![:space:]]}"}
        case $val in \"*\") val=${val:1:${#val}-2} ;; \'*\') val=${val:1:${#val}-2} ;; esac
        case $key in
            access_key|aws_access_key_id) access=$val ;;
            secret_key|aws_secret_access_key) secret=$val ;;
        esac
    done < "$file"
    if [ -z "$access" ] || [ -z "$secret" ]; then
        echo "mdxbench: S3 credentials file $file of object target $target lacks an access_key= or a secret_key= line" >&2
        return 1
    fi
    export WARP_ACCESS_KEY="$access" WARP_SECRET_KEY="$secret"
    echo "mdxbench: S3 credentials of $target from $file"
}
