# bash completion for unetctl(8)                     -*- shell-script -*-
# SPDX-License-Identifier: BSD-2-Clause
#
# Installed as .../bash-completion/completions/unetctl.  Completes the
# commands and subcommands (`daemon status` too), options and their
# values, interface names (from /sys/class/net, also for `doctor`), and
# the tags of `channel del` and the ports of `udp del` from unetctl's own
# listing of the interface (which needs root; nothing is offered without
# it).

# _unetctl_ifaces: the network interfaces of this namespace.
_unetctl_ifaces()
{
	local d
	for d in /sys/class/net/*; do
		[[ -e $d ]] && printf '%s\n' "${d##*/}"
	done
}

# _unetctl_list WHAT IFACE: `unetctl WHAT list IFACE` in text, with the
# --pin-root given on the command line; quiet on errors.
_unetctl_list()
{
	local -a opt=()
	[[ -n $_unetctl_pin_root ]] && opt=(--pin-root "$_unetctl_pin_root")
	"${_unetctl_cmd:-unetctl}" "${opt[@]}" "$1" list "$2" 2>/dev/null
}

_unetctl()
{
	local cur prev words cword
	if declare -F _init_completion >/dev/null; then
		_init_completion -n : || return
	else
		cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD - 1]}
		words=("${COMP_WORDS[@]}") cword=$COMP_CWORD
	fi

	local globals="--json --pin-root --socket --verbose --help --version"
	local cmds="attach detach status channel endpoint udp tcp sockets steer stats reclaim fault daemon doctor help"
	local _unetctl_cmd=${words[0]} _unetctl_pin_root=""
	local -a pos=()
	local i w
	# The words before the cursor, without global options.
	for ((i = 1; i < cword; i++)); do
		w=${words[i]}
		case $w in
		--pin-root)
			_unetctl_pin_root=${words[i + 1]}
			((i++))
			;;
		--pin-root=*) _unetctl_pin_root=${w#--pin-root=} ;;
		--socket) ((i++)) ;; # its PATH is no command word
		-*) ;;
		*) pos+=("$w") ;;
		esac
	done

	case $prev in
	--pin-root)
		COMPREPLY=($(compgen -d -- "$cur"))
		return
		;;
	--socket)
		COMPREPLY=($(compgen -f -- "$cur"))
		return
		;;
	--mode)
		COMPREPLY=($(compgen -W "native skb auto" -- "$cur"))
		return
		;;
	--endpoint | --tag | --peer | --peer-tag | --peer-ip | --peer-port | --chan-port | --drop-ppm | --pid)
		return
		;;
	esac

	local cmd=${pos[0]-} n=${#pos[@]}
	if [[ $cur == -* ]]; then
		local opts=$globals
		case $cmd in
		attach) opts+=" --mode --chan-port" ;;
		channel) [[ ${pos[1]-} == add ]] && opts+=" --endpoint --tag --peer --peer-ip --peer-port --peer-tag" ;;
		fault) opts+=" --drop-ppm" ;;
		sockets) opts+=" --pid" ;;
		steer) opts+=" --endpoint --install --remove" ;;
		esac
		COMPREPLY=($(compgen -W "$opts" -- "$cur"))
		return
	fi
	if ((n == 0)); then
		COMPREPLY=($(compgen -W "$cmds" -- "$cur"))
		return
	fi
	case $cmd in
	attach | detach | status | steer | stats | reclaim | fault | doctor)
		((n == 1)) && COMPREPLY=($(compgen -W "$(_unetctl_ifaces)" -- "$cur"))
		;;
	daemon)
		((n == 1)) && COMPREPLY=($(compgen -W "status" -- "$cur"))
		;;
	channel | endpoint | udp | tcp)
		local subs
		case $cmd in
		channel) subs="list add del" ;;
		endpoint) subs="list" ;;
		udp | tcp) subs="list del" ;;
		esac
		if ((n == 1)); then
			COMPREPLY=($(compgen -W "$subs" -- "$cur"))
		elif ((n == 2)); then
			COMPREPLY=($(compgen -W "$(_unetctl_ifaces)" -- "$cur"))
		elif ((n == 3)) && [[ $cmd == channel && ${pos[1]} == del ]]; then
			# "iface veth0  tag 7  peer_mac ..."
			COMPREPLY=($(compgen -W "$(_unetctl_list channel "${pos[2]}" |
				sed -n 's/^iface [^ ]*  tag \([0-9][0-9]*\) .*/\1/p')" -- "$cur"))
		elif ((n == 3)) && [[ ($cmd == udp || $cmd == tcp) && ${pos[1]} == del ]]; then
			# "iface veth0  addr 10.0.0.1  port 7000  ..."
			COMPREPLY=($(compgen -W "$(_unetctl_list "$cmd" "${pos[2]}" |
				sed -n 's/^iface [^ ]*  addr \([0-9.]*\)  port \([0-9][0-9]*\) .*/\1:\2/p')" -- "$cur"))
			declare -F __ltrim_colon_completions >/dev/null && __ltrim_colon_completions "$cur"
		fi
		;;
	esac
} &&
	complete -F _unetctl unetctl
